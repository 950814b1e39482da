// The audit log (docs/security.md): a scripted session on a server of its own, whose log then
// holds exactly that session's entries in order and nothing else; the filters, keyset pages,
// what an account-scoped audit:read sees, the export as JSON lines, and the retention sweep.
import { expect } from 'chai';
import { sweepAudit } from '../src/audit/log.ts';
import type { presentAuditEntry } from '../src/presenters/audit.ts';
import { client, type Answer, type Client } from './support/http.ts';
import { startTestServer, TEST_ADMIN, type TestServer } from './support/server.ts';

/** An entry as the API answers it (JSON: what the presenter makes). */
type Entry = ReturnType<typeof presentAuditEntry>;

const AGENT = 'audit-test/1.0';

describe('audit log', function () {
  this.timeout(120_000);
  let server: TestServer;
  let api: Client;
  /** The request id of each step, as the server answered it (x-request-id). */
  const requestIds: string[] = [];

  const call = async <T>(method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string, token?: string, json?: unknown) => {
    const requestId = `audit-step-${requestIds.length + 1}`;
    const answer = await api[method]<T>(path, { token, json, headers: { 'user-agent': AGENT, 'x-request-id': requestId } });
    requestIds.push(requestId);
    return answer;
  };

  async function all(token: string, query = ''): Promise<Entry[]> {
    const answer = await api.get<Entry[]>(`/adminApi/audit?limit=200${query}`, { token });
    expect(answer.status, answer.text).to.equal(200);
    return answer.body.data;
  }

  let adminId: number;
  let accountId: number;
  let serviceId: number;
  let keyId: number;
  let operatorId: number;
  let readerToken: string;
  let token: string;

  before(async () => {
    server = await startTestServer();
    api = client(server.url);
  });
  after(async () => {
    await server.stop();
  });

  it('holds the exact entries of a scripted session, newest first, and nothing else', async () => {
    // Sign-ins that fail: a wrong password for a real operator, an email nobody has.
    expect((await call('post', '/adminApi/login', undefined, { email: TEST_ADMIN.email, password: 'wrong' })).status).to.equal(401);
    expect((await call('post', '/adminApi/login', undefined, { email: 'nobody@palaver.test', password: 'wrong' })).status).to.equal(401);
    const login = await call<{ token: string }>('post', '/adminApi/login', undefined, TEST_ADMIN);
    expect(login.status, login.text).to.equal(200);
    const first = login.body.data.token;
    const session = await api.get<{ id: number }>('/adminApi/session', { token: first });
    adminId = session.body.data.id;

    const account = await call<{ id: number }>('post', '/adminApi/accounts', first, { name: 'Audited' });
    accountId = account.body.data.id;
    expect(
      (await call('patch', `/adminApi/accounts/${accountId}`, first, { name: 'Audited, renamed', welcomeMessage: 'secret hello' })).status,
    ).to.equal(200);
    const service = await call<{ id: number }>('post', `/adminApi/accounts/${accountId}/services`, first, { name: 'Bot' });
    serviceId = service.body.data.id;
    const key = await call<{ id: number }>('post', `/adminApi/services/${serviceId}/keys`, first);
    keyId = key.body.data.id;
    expect((await call('post', `/adminApi/services/${serviceId}/signing-secret`, first)).status).to.equal(200);
    // Reading changes nothing: no entry.
    expect((await call('get', `/adminApi/accounts/${accountId}`, first)).status).to.equal(200);
    const operator = await call<{ id: number }>('post', '/adminApi/operators', first, {
      email: 'reader@palaver.test',
      password: 'reader password one',
      grants: [{ permission: 'audit:read', accountId }],
    });
    expect(operator.status, operator.text).to.equal(201);
    operatorId = operator.body.data.id;
    const reset = await call<{ url: string }>('post', `/adminApi/operators/${operatorId}/password-reset`, first);
    const resetToken = reset.body.data.url.split('/').pop();
    expect(
      (await call('post', '/adminApi/password-reset', undefined, { token: resetToken, password: 'reader password two' })).status,
    ).to.equal(200);
    expect(
      (await call('post', '/adminApi/password-reset', undefined, { token: resetToken, password: 'reader password three' })).status,
    ).to.equal(400);
    expect((await call('delete', '/adminApi/session', first)).status).to.equal(200);
    const again = await call<{ token: string }>('post', '/adminApi/login', undefined, TEST_ADMIN);
    token = again.body.data.token;

    const entries = await all(token);
    const admin = { id: adminId, email: TEST_ADMIN.email };
    const expected = [
      ['sign_in.password', 'failure', 'anonymous', admin, null, {}, []],
      ['sign_in.password', 'failure', 'anonymous', { id: null, email: 'nobody@palaver.test' }, null, {}, []],
      ['sign_in.password', 'success', 'operator', admin, null, { operatorId: adminId }, []],
      ['account.create', 'success', 'operator', admin, accountId, { accountId }, ['name']],
      ['account.update', 'success', 'operator', admin, accountId, { accountId }, ['name', 'welcomeMessage']],
      ['service.create', 'success', 'operator', admin, accountId, { serviceId }, ['name']],
      ['service.create_key', 'success', 'operator', admin, accountId, { serviceId, keyId }, []],
      ['service.rotate_signing_secret', 'success', 'operator', admin, accountId, { serviceId }, ['signingSecret']],
      ['operator.create', 'success', 'operator', admin, null, { operatorId }, ['email', 'grants', 'password']],
      ['password_reset.create', 'success', 'operator', admin, null, { operatorId }, []],
      ['password_reset.use', 'success', 'anonymous', { id: operatorId, email: 'reader@palaver.test' }, null, { operatorId }, ['password']],
      ['password_reset.use', 'failure', 'anonymous', null, null, {}, []],
      ['sign_out', 'success', 'operator', admin, null, { operatorId: adminId }, []],
      ['sign_in.password', 'success', 'operator', admin, null, { operatorId: adminId }, []],
    ];
    const seen = [...entries].reverse().map((e) => {
      const { sessionId: _s, ...target } = e.target;
      return [e.action, e.outcome, e.actor, e.operator && { id: e.operator.id, email: e.operator.email }, e.accountId, target, e.changed];
    });
    expect(seen).to.deep.equal(expected);
    // Every step recorded but the account read (the ninth).
    const recorded = requestIds.filter((_, n) => n !== 8);
    expect([...entries].reverse().map((e) => e.requestId)).to.deep.equal(recorded);
    for (const entry of entries) {
      expect(entry.userAgent).to.equal(AGENT);
      expect(entry.address).to.match(/127\.0\.0\.1$|^::1$/);
      expect(Date.parse(entry.at)).to.be.greaterThan(0);
    }
    // Sign-ins and sign-out name their session; nothing holds a value of what changed.
    const signIn = entries.find((e) => e.action === 'sign_in.password' && e.outcome === 'success');
    expect(signIn?.target.sessionId).to.be.a('number');
    expect(JSON.stringify(entries)).to.not.contain('secret hello').and.not.contain('reader password').and.not.contain('wrong');
  });

  it('filters by account, operator, action and time, and pages by keyset', async () => {
    const everything = await all(token);
    const ofAccount = await all(token, `&accountId=${accountId}`);
    expect(ofAccount.map((e) => e.action)).to.deep.equal([
      'service.rotate_signing_secret',
      'service.create_key',
      'service.create',
      'account.update',
      'account.create',
    ]);
    expect((await all(token, '&action=service')).map((e) => e.action)).to.deep.equal([
      'service.rotate_signing_secret',
      'service.create_key',
      'service.create',
    ]);
    expect((await all(token, '&action=service.create')).map((e) => e.action)).to.deep.equal(['service.create']);
    expect((await all(token, `&operatorId=${operatorId}`)).map((e) => e.action)).to.deep.equal(['password_reset.use']);
    const middle = everything[5];
    const since = await all(token, `&since=${encodeURIComponent(middle?.at ?? '')}`);
    expect(since.every((e) => Date.parse(e.at) >= Date.parse(middle?.at ?? ''))).to.equal(true);
    expect((await all(token, `&until=${encodeURIComponent('2000-01-01T00:00:00Z')}`)).length).to.equal(0);

    const paged: Entry[] = [];
    let before: string | null = null;
    do {
      const page: Answer<Entry[]> = await api.get<Entry[]>(`/adminApi/audit?limit=4${before ? `&before=${before}` : ''}`, { token });
      paged.push(...page.body.data);
      before = (page.body as unknown as { paging: { before: string | null } }).paging.before;
    } while (before);
    expect(paged.map((e) => e.id)).to.deep.equal(everything.map((e) => e.id));

    for (const bad of ['limit=0', 'before=x', 'action=Service!', 'since=yesterday', 'accountId=-1']) {
      const answer = await api.get(`/adminApi/audit?${bad}`, { token });
      expect(answer.status, bad).to.equal(422);
    }
  });

  it("shows an account-scoped audit:read that account's entries only", async () => {
    const login = await api.post<{ token: string }>('/adminApi/login', {
      json: { email: 'reader@palaver.test', password: 'reader password two' },
    });
    readerToken = login.body.data.token;
    const seen = await all(readerToken);
    expect(seen.map((e) => e.accountId)).to.deep.equal([accountId, accountId, accountId, accountId, accountId]);
    // Its own sign-in names no account: only an everywhere grant sees it.
    expect((await all(token)).find((e) => e.operator?.id === operatorId && e.action === 'sign_in.password')).to.not.equal(undefined);
  });

  it('exports the same entries as JSON lines, with the same filters', async () => {
    const response = await fetch(`${server.url}/adminApi/audit/export?action=service`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^application\/x-ndjson/);
    const lines = (await response.text())
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Entry);
    expect(lines).to.deep.equal(await all(token, '&action=service'));
    const scoped = await fetch(`${server.url}/adminApi/audit/export`, { headers: { authorization: `Bearer ${readerToken}` } });
    const scopedLines = (await scoped.text())
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Entry);
    expect(scopedLines.map((e) => e.accountId)).to.deep.equal([accountId, accountId, accountId, accountId, accountId]);
  });

  it('deletes entries past the retention, and only those', async () => {
    const before = await all(token);
    const oldest = before[before.length - 1];
    const em = server.deps.db.orm.em.fork();
    await em.getConnection().execute(`update audit_entries set at = now() - interval '366 days' where id = ?`, [oldest?.id]);
    expect(await sweepAudit(em, 365)).to.equal(1);
    expect(await sweepAudit(em, 365)).to.equal(0);
    const after = await all(token);
    expect(after.map((e) => e.id)).to.deep.equal(before.slice(0, -1).map((e) => e.id));
  });
});
