// docs/widget.md publishes the path and integrity value of the widget build this release serves;
// they must be those of the build the sources make now, or sites pinning them would break.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { client } from './support/http.ts';
import { sharedServer } from './support/server.ts';

describe('docs/widget.md', () => {
  it('publishes the path and integrity value of the build the server serves', async () => {
    const about = await client(sharedServer().url).get<{ path: string; integrity: string }>('/widget.json');
    const docs = readFileSync(path.resolve(import.meta.dirname, '..', 'docs', 'widget.md'), 'utf8');
    const row = `| \`${about.body.data.path}\` | \`${about.body.data.integrity}\` |`;
    expect(docs, `docs/widget.md should hold the row\n${row}`).to.contain(row);
  });
});
