// A file whose bytes start as a PNG but carry markup: the type comes from the bytes (image/png),
// and the answer keeps a browser from sniffing or running it: nosniff and the sandboxing CSP.
import { expect } from 'chai';
import { PNG } from './support/files.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget, type ClientMessage } from './support/widget.ts';

describe('media: a PNG signature followed by markup', function () {
  this.timeout(30_000);
  let t: Tenant;

  beforeEach(async () => {
    t = await tenant();
  });
  afterEach(() => t.receiver.close());

  it('is served as image/png with nosniff and the sandbox CSP, never as a page', async () => {
    const widget = new Widget(t.account);
    await widget.register();
    const markup = Buffer.from('<html><body><script>fetch("/adminApi/operators")</script></body></html>', 'utf8');
    const form = new FormData();
    form.append('media', new Blob([Buffer.concat([PNG.subarray(0, 16), markup])], { type: 'text/html' }), 'page.html');
    const uploaded = await fetch(`${widget.baseUrl}/media`, { method: 'POST', headers: widget.headers(), body: form });
    const body = (await uploaded.json()) as { data: { media: string } | null };
    if (uploaded.status !== 200) {
      // Refusing it is as good: it is then never served at all.
      expect(uploaded.status).to.be.oneOf([415, 422]);
      return;
    }
    const sent = await widget.send({ media: { id: body.data?.media, description: 'x' } });
    expect(sent.status).to.equal(200);
    const shown = (await widget.messages()).body.data[0] as ClientMessage;
    const { year, month, day, filename } = shown.media as Record<string, string>;
    const file = await fetch(`${widget.baseUrl}/media/${year}/${month}/${day}/${filename}`, { headers: widget.headers() });
    expect(file.status).to.equal(200);
    expect(file.headers.get('content-type')).to.equal('image/png');
    expect(file.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(file.headers.get('content-security-policy')).to.equal("default-src 'none'; sandbox");
    expect(String(filename)).to.match(/\.png$/);
  });
});
