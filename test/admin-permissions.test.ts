// The Admin API's permission matrix: every route, for an operator holding each permission (and
// none, and '*'), on one account and everywhere; and a record of another account answered
// exactly as an unknown id. The expected permissions are written out here, apart from
// the route declarations (src/api/admin/*.ts, their `rule`), so a change of a rule shows up as a failing cell.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { ADMIN_ROUTES, PUBLIC_ADMIN_ROUTES, adminRouter } from '../src/api/admin/routers.ts';
import { routeName } from '../src/api/admin/route.ts';
import { PERMISSIONS } from '../src/tenancy/permissions.ts';
import type { Envelope } from '../src/presenters/envelope.ts';
import { enqueueCommitted } from './support/deliveries.ts';
import { adminToken } from './support/factories.ts';
import { client, type Answer } from './support/http.ts';
import { sharedServer } from './support/server.ts';
import { tenant, type Tenant } from './support/tenant.ts';

type Grant = { accountId: number | null; permission: string };

interface Ids {
  accountId: number;
  serviceId: number;
  serviceIdentification: string;
  deliveryId: string;
  keyId: number;
  operatorId: number;
  webhookUrl: string;
}

interface Case {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** As the router lists it, under /adminApi. */
  route: string;
  path: (ids: Ids) => string;
  body?: (ids: Ids) => unknown;
  /** Every one of them is needed (deliveries:manage includes deliveries:read). */
  needs: string[];
  /** Needs them on every account (a grant with no account), not on the one of the path. */
  everywhere?: boolean;
  /** The answer once allowed. */
  allowed: number;
  /** A route on a Service or a delivery: another account's record answers as an unknown id. */
  record?: boolean;
  /** Names no account: the operator's own session, or a list of the accounts they may read. */
  noAccount?: boolean;
}

const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

const CASES: Case[] = [
  // The operator's own session: a valid token is all it takes.
  { method: 'GET', route: '/session', path: () => '/adminApi/session', needs: [], allowed: 200, noAccount: true },
  // The operator's own account: a valid token is all it takes too.
  {
    method: 'PUT',
    route: '/me/password',
    path: () => '/adminApi/me/password',
    body: () => ({ currentPassword: 'matrix password', newPassword: 'matrix password, changed' }),
    needs: [],
    allowed: 200,
    noAccount: true,
  },
  { method: 'GET', route: '/me/sessions', path: () => '/adminApi/me/sessions', needs: [], allowed: 200, noAccount: true },
  // Not a session of theirs: 404.
  {
    method: 'DELETE',
    route: '/me/sessions/:sessionId',
    path: () => '/adminApi/me/sessions/2147483000',
    needs: [],
    allowed: 404,
    noAccount: true,
  },
  // Nothing to confirm, nothing to renew or turn off yet: 409 (before the enrolment starts below).
  {
    method: 'POST',
    route: '/me/two-factor/confirm',
    path: () => '/adminApi/me/two-factor/confirm',
    body: () => ({ code: '000000' }),
    needs: [],
    allowed: 409,
    noAccount: true,
  },
  {
    method: 'POST',
    route: '/me/two-factor/recovery-codes',
    path: () => '/adminApi/me/two-factor/recovery-codes',
    body: () => ({ code: '000000' }),
    needs: [],
    allowed: 409,
    noAccount: true,
  },
  {
    method: 'POST',
    route: '/me/two-factor/disable',
    path: () => '/adminApi/me/two-factor/disable',
    body: () => ({ code: '000000' }),
    needs: [],
    allowed: 409,
    noAccount: true,
  },
  { method: 'POST', route: '/me/two-factor', path: () => '/adminApi/me/two-factor', needs: [], allowed: 201, noAccount: true },
  // One's own display name and avatar.
  {
    method: 'PATCH',
    route: '/session',
    path: () => '/adminApi/session',
    body: () => ({ displayName: 'Matrix' }),
    needs: [],
    allowed: 200,
    noAccount: true,
  },
  // Held on some account: the list shows only those (checked below).
  { method: 'GET', route: '/accounts', path: () => '/adminApi/accounts', needs: ['accounts:read'], allowed: 200, noAccount: true },
  {
    method: 'POST',
    route: '/accounts',
    path: () => '/adminApi/accounts',
    body: () => ({ name: 'Matrix' }),
    needs: ['accounts:create'],
    everywhere: true,
    allowed: 201,
  },
  {
    method: 'GET',
    route: '/accounts/:accountId',
    path: (i) => `/adminApi/accounts/${i.accountId}`,
    needs: ['accounts:read'],
    allowed: 200,
  },
  {
    method: 'PATCH',
    route: '/accounts/:accountId',
    path: (i) => `/adminApi/accounts/${i.accountId}`,
    body: () => ({ stickyMessage: 'x' }),
    needs: ['accounts:edit'],
    allowed: 200,
  },
  {
    method: 'POST',
    route: '/accounts/:accountId/authorization-secret',
    path: (i) => `/adminApi/accounts/${i.accountId}/authorization-secret`,
    needs: ['accounts:edit', 'conversations:read'],
    allowed: 200,
  },
  {
    method: 'PUT',
    route: '/accounts/:accountId/default-service',
    path: (i) => `/adminApi/accounts/${i.accountId}/default-service`,
    needs: ['services:edit', 'conversations:read'],
    allowed: 200,
  },
  {
    method: 'POST',
    route: '/accounts/:accountId/services',
    path: (i) => `/adminApi/accounts/${i.accountId}/services`,
    body: () => ({ name: 'Matrix' }),
    needs: ['services:edit', 'conversations:read'],
    allowed: 201,
  },
  {
    method: 'PATCH',
    route: '/services/:serviceId',
    path: (i) => `/adminApi/services/${i.serviceId}`,
    body: () => ({ name: 'Owner' }),
    needs: ['services:edit'],
    allowed: 200,
    record: true,
  },
  {
    method: 'GET',
    route: '/services/:serviceId/keys',
    path: (i) => `/adminApi/services/${i.serviceId}/keys`,
    needs: ['services:edit'],
    allowed: 200,
    record: true,
  },
  {
    method: 'POST',
    route: '/services/:serviceId/keys',
    path: (i) => `/adminApi/services/${i.serviceId}/keys`,
    needs: ['services:edit', 'conversations:read'],
    allowed: 201,
    record: true,
  },
  {
    method: 'DELETE',
    route: '/services/:serviceId/keys/:keyId',
    path: (i) => `/adminApi/services/${i.serviceId}/keys/${i.keyId}`,
    needs: ['services:edit'],
    allowed: 200,
    record: true,
  },
  // Sent to the tenant's loopback receiver.
  {
    method: 'POST',
    route: '/services/:serviceId/test-event',
    path: (i) => `/adminApi/services/${i.serviceId}/test-event`,
    needs: ['services:edit', 'conversations:read'],
    allowed: 200,
    record: true,
  },
  {
    method: 'POST',
    route: '/services/:serviceId/signing-secret',
    path: (i) => `/adminApi/services/${i.serviceId}/signing-secret`,
    needs: ['services:edit'],
    allowed: 200,
    record: true,
  },
  {
    method: 'GET',
    route: '/accounts/:accountId/users',
    path: (i) => `/adminApi/accounts/${i.accountId}/users`,
    needs: ['conversations:read'],
    allowed: 200,
  },
  {
    method: 'GET',
    route: '/accounts/:accountId/conversations',
    path: (i) => `/adminApi/accounts/${i.accountId}/conversations`,
    needs: ['conversations:read'],
    allowed: 200,
  },
  // An unknown user of the account: 404 once allowed, 403 before.
  {
    method: 'GET',
    route: '/accounts/:accountId/users/:userId/messages',
    path: (i) => `/adminApi/accounts/${i.accountId}/users/2147483000/messages`,
    needs: ['conversations:read'],
    allowed: 404,
  },
  // An unknown file of the account: 404 once allowed, 403 before.
  {
    method: 'GET',
    route: '/accounts/:accountId/media/:year/:month/:day/:file',
    path: (i) => `/adminApi/accounts/${i.accountId}/media/2026/1/1/${UNKNOWN_UUID}.png`,
    needs: ['conversations:read'],
    allowed: 404,
  },
  // An unknown user of the account: 404 once allowed, 403 before.
  {
    method: 'PUT',
    route: '/accounts/:accountId/users/:userId/owner',
    path: (i) => `/adminApi/accounts/${i.accountId}/users/2147483000/owner`,
    body: () => ({ serviceIdentification: 'unknown' }),
    needs: ['services:edit', 'conversations:read'],
    allowed: 404,
  },
  // The team inbox: an unknown user of the account, 404 once allowed, 403 before.
  {
    method: 'POST',
    route: '/accounts/:accountId/users/:userId/messages',
    path: (i) => `/adminApi/accounts/${i.accountId}/users/2147483000/messages`,
    body: () => ({ message: 'hello' }),
    needs: ['conversations:reply'],
    allowed: 404,
  },
  // A file for an answer: this walk sends no multipart body, so 415 multipart_required once allowed.
  {
    method: 'POST',
    route: '/accounts/:accountId/users/:userId/media',
    path: (i) => `/adminApi/accounts/${i.accountId}/users/2147483000/media`,
    needs: ['conversations:reply'],
    allowed: 415,
  },
  {
    method: 'POST',
    route: '/accounts/:accountId/users/:userId/typing',
    path: (i) => `/adminApi/accounts/${i.accountId}/users/2147483000/typing`,
    body: () => ({ isTyping: true }),
    needs: ['conversations:reply'],
    allowed: 404,
  },
  {
    method: 'GET',
    route: '/accounts/:accountId/inbox',
    path: (i) => `/adminApi/accounts/${i.accountId}/inbox`,
    needs: ['conversations:read'],
    allowed: 200,
  },
  {
    method: 'GET',
    route: '/accounts/:accountId/users/:userId/timeline',
    path: (i) => `/adminApi/accounts/${i.accountId}/users/2147483000/timeline`,
    needs: ['conversations:read'],
    allowed: 404,
  },
  {
    method: 'PUT',
    route: '/accounts/:accountId/users/:userId/assignee',
    path: (i) => `/adminApi/accounts/${i.accountId}/users/2147483000/assignee`,
    body: () => ({ assigneeId: null, expectedAssigneeId: null }),
    needs: ['conversations:reply'],
    allowed: 404,
  },
  {
    method: 'PUT',
    route: '/accounts/:accountId/users/:userId/status',
    path: (i) => `/adminApi/accounts/${i.accountId}/users/2147483000/status`,
    body: () => ({ status: 'resolved' }),
    needs: ['conversations:reply'],
    allowed: 404,
  },
  {
    method: 'POST',
    route: '/accounts/:accountId/users/:userId/notes',
    path: (i) => `/adminApi/accounts/${i.accountId}/users/2147483000/notes`,
    body: () => ({ text: 'a note' }),
    needs: ['conversations:reply'],
    allowed: 404,
  },
  {
    method: 'PUT',
    route: '/accounts/:accountId/users/:userId/read',
    path: (i) => `/adminApi/accounts/${i.accountId}/users/2147483000/read`,
    body: () => ({ messageId: 1 }),
    needs: ['conversations:read'],
    allowed: 404,
  },
  {
    method: 'POST',
    route: '/accounts/:accountId/users/:userId/take-over',
    path: (i) => `/adminApi/accounts/${i.accountId}/users/2147483000/take-over`,
    needs: ['conversations:reply'],
    allowed: 404,
  },
  {
    method: 'GET',
    route: '/accounts/:accountId/users/:userId/handover',
    path: (i) => `/adminApi/accounts/${i.accountId}/users/2147483000/handover`,
    needs: ['conversations:read'],
    allowed: 404,
  },
  {
    method: 'GET',
    route: '/accounts/:accountId/canned-replies',
    path: (i) => `/adminApi/accounts/${i.accountId}/canned-replies`,
    needs: ['conversations:read'],
    allowed: 200,
  },
  {
    method: 'POST',
    route: '/accounts/:accountId/canned-replies',
    path: (i) => `/adminApi/accounts/${i.accountId}/canned-replies`,
    body: () => ({ shortcut: `m${randomBytes(6).toString('hex')}`, text: 'Hello!' }),
    needs: ['accounts:edit'],
    allowed: 201,
  },
  // An unknown canned reply of the account: 404 once allowed, 403 before.
  {
    method: 'PATCH',
    route: '/accounts/:accountId/canned-replies/:replyId',
    path: (i) => `/adminApi/accounts/${i.accountId}/canned-replies/2147483000`,
    body: () => ({ text: 'Hi' }),
    needs: ['accounts:edit'],
    allowed: 404,
  },
  {
    method: 'DELETE',
    route: '/accounts/:accountId/canned-replies/:replyId',
    path: (i) => `/adminApi/accounts/${i.accountId}/canned-replies/2147483000`,
    needs: ['accounts:edit'],
    allowed: 404,
  },
  // An unknown user of the account: 404 once allowed, 403 before.
  {
    method: 'DELETE',
    route: '/accounts/:accountId/users/:userId',
    path: (i) => `/adminApi/accounts/${i.accountId}/users/2147483000`,
    needs: ['users:delete'],
    allowed: 404,
  },
  { method: 'GET', route: '/operators', path: () => '/adminApi/operators', needs: ['operators:manage'], everywhere: true, allowed: 200 },
  {
    method: 'POST',
    route: '/operators',
    path: () => '/adminApi/operators',
    body: () => ({ email: `matrix-${randomBytes(6).toString('hex')}@palaver.test`, password: 'matrix password', grants: [] }),
    needs: ['operators:manage'],
    everywhere: true,
    allowed: 201,
  },
  {
    method: 'PUT',
    route: '/operators/:operatorId/grants',
    path: (i) => `/adminApi/operators/${i.operatorId}/grants`,
    body: () => ({ grants: [] }),
    needs: ['operators:manage'],
    everywhere: true,
    allowed: 200,
  },
  // Enabling the target operator (never disabled): the same answer however often it is called.
  {
    method: 'PUT',
    route: '/operators/:operatorId/disabled',
    path: (i) => `/adminApi/operators/${i.operatorId}/disabled`,
    body: () => ({ disabled: false }),
    needs: ['operators:manage'],
    everywhere: true,
    allowed: 200,
  },
  {
    method: 'POST',
    route: '/operators/:operatorId/password-reset',
    path: (i) => `/adminApi/operators/${i.operatorId}/password-reset`,
    needs: ['operators:manage'],
    everywhere: true,
    allowed: 201,
  },
  {
    method: 'GET',
    route: '/operators/:operatorId/sessions',
    path: (i) => `/adminApi/operators/${i.operatorId}/sessions`,
    needs: ['operators:manage'],
    everywhere: true,
    allowed: 200,
  },
  {
    method: 'DELETE',
    route: '/operators/:operatorId/sessions',
    path: (i) => `/adminApi/operators/${i.operatorId}/sessions`,
    needs: ['operators:manage'],
    everywhere: true,
    allowed: 200,
  },
  // Not a session of that operator: 404 once allowed.
  {
    method: 'DELETE',
    route: '/operators/:operatorId/sessions/:sessionId',
    path: (i) => `/adminApi/operators/${i.operatorId}/sessions/2147483000`,
    needs: ['operators:manage'],
    everywhere: true,
    allowed: 404,
  },
  {
    method: 'GET',
    route: '/services/:serviceId/deliveries',
    path: (i) => `/adminApi/services/${i.serviceId}/deliveries`,
    needs: ['deliveries:read', 'conversations:read'],
    allowed: 200,
    record: true,
  },
  {
    method: 'GET',
    route: '/services/:serviceId/delivery-stats',
    path: (i) => `/adminApi/services/${i.serviceId}/delivery-stats`,
    needs: ['deliveries:read'],
    allowed: 200,
    record: true,
  },
  {
    method: 'POST',
    route: '/services/:serviceId/deliveries/retry',
    path: (i) => `/adminApi/services/${i.serviceId}/deliveries/retry`,
    needs: ['deliveries:manage'],
    allowed: 200,
    record: true,
  },
  // The delivery was delivered, not dead: 409 once allowed.
  {
    method: 'POST',
    route: '/deliveries/:deliveryId/redeliver',
    path: (i) => `/adminApi/deliveries/${i.deliveryId}/redeliver`,
    needs: ['deliveries:manage', 'conversations:read'],
    allowed: 409,
    record: true,
  },
  {
    method: 'GET',
    route: '/deliveries/:deliveryId/attempts',
    path: (i) => `/adminApi/deliveries/${i.deliveryId}/attempts`,
    needs: ['deliveries:read'],
    allowed: 200,
    record: true,
  },
  {
    method: 'GET',
    route: '/accounts/:accountId/push-deliveries',
    path: (i) => `/adminApi/accounts/${i.accountId}/push-deliveries`,
    needs: ['deliveries:read', 'conversations:read'],
    allowed: 200,
  },
  {
    method: 'GET',
    route: '/accounts/:accountId/email-deliveries',
    path: (i) => `/adminApi/accounts/${i.accountId}/email-deliveries`,
    needs: ['deliveries:read', 'conversations:read'],
    allowed: 200,
  },
  {
    method: 'GET',
    route: '/accounts/:accountId/push-settings',
    path: (i) => `/adminApi/accounts/${i.accountId}/push-settings`,
    needs: ['accounts:read'],
    allowed: 200,
  },
  {
    method: 'PUT',
    route: '/accounts/:accountId/push-settings/:kind',
    path: (i) => `/adminApi/accounts/${i.accountId}/push-settings/webhook`,
    body: () => ({ url: 'https://push.example.com/hook' }),
    needs: ['accounts:edit', 'conversations:read'],
    allowed: 200,
  },
  // No OAuth webhook was ever set: 404 once allowed.
  {
    method: 'DELETE',
    route: '/accounts/:accountId/push-settings/:kind',
    path: (i) => `/adminApi/accounts/${i.accountId}/push-settings/oauth-webhook`,
    needs: ['accounts:edit'],
    allowed: 404,
  },
  // The audit log: held on an account, that account's entries (checked in test/audit.test.ts); everywhere, all.
  { method: 'GET', route: '/audit', path: () => '/adminApi/audit', needs: ['audit:read'], allowed: 200, noAccount: true },
  {
    method: 'GET',
    route: '/audit/export',
    path: () => '/adminApi/audit/export',
    needs: ['audit:read'],
    allowed: 200,
    noAccount: true,
  },
  // Last: it ends the session whose token walked the cases above.
  { method: 'DELETE', route: '/session', path: () => '/adminApi/session', needs: [], allowed: 200, noAccount: true },
];

/**
 * Routes already in CASES with a body that needs more: what changes where conversation content
 * goes needs conversations:read besides the route's own permission.
 */
const FIELD_CASES: Case[] = [
  // The tenant's own receiver, so the walk changes nothing of where its webhooks go.
  {
    method: 'PATCH',
    route: '/services/:serviceId',
    path: (i) => `/adminApi/services/${i.serviceId}`,
    body: (i) => ({ webhookUrl: i.webhookUrl }),
    needs: ['services:edit', 'conversations:read'],
    allowed: 200,
    record: true,
  },
];

function holds(held: string[], needed: string): boolean {
  return held.includes('*') || held.includes(needed) || (needed === 'deliveries:read' && held.includes('deliveries:manage'));
}

/** The envelope without what differs between any two answers: the duration, the ids in the path. */
function comparable(answer: Answer, ids: string[]): unknown {
  const body: Envelope = structuredClone(answer.body);
  body.metadata.duration = 0;
  body.metadata.values.url = ids.reduce((url, id) => url.replace(id, ':id'), body.metadata.values.url);
  return body;
}

describe('Admin API: permission matrix', function () {
  this.timeout(600_000);
  const api = () => client(sharedServer().url);
  let mine: Tenant;
  let theirs: Tenant;
  let ids: Ids;
  let otherIds: Ids;

  async function operatorToken(grants: Grant[]): Promise<string> {
    const email = `matrix-${randomBytes(6).toString('hex')}@palaver.test`;
    const created = await api().post<{ id: number }>('/adminApi/operators', {
      token: await adminToken(),
      json: { email, password: 'matrix password', grants },
    });
    expect(created.status, created.text).to.equal(201);
    const login = await api().post<{ token: string }>('/adminApi/login', { json: { email, password: 'matrix password' } });
    expect(login.status, login.text).to.equal(200);
    return login.body.data.token;
  }

  async function idsOf(t: Tenant): Promise<Ids> {
    const token = await adminToken();
    const key = await api().post<{ id: number }>(`/adminApi/services/${t.service.id}/keys`, { token });
    expect(key.status, key.text).to.equal(201);
    const [deliveryId = ''] = await enqueueCommitted(sharedServer(), { recipients: [t.service.id] });
    const operator = await api().post<{ id: number }>('/adminApi/operators', {
      token,
      json: { email: `target-${randomBytes(6).toString('hex')}@palaver.test`, password: 'matrix password', grants: [] },
    });
    return {
      accountId: t.account.id,
      serviceId: t.service.id,
      serviceIdentification: t.service.identification,
      deliveryId,
      keyId: key.body.data.id,
      operatorId: operator.body.data.id,
      webhookUrl: `${t.receiver.url}/hook`,
    };
  }

  const call = (c: Case, token: string, target: Ids) => {
    const json = c.route.endsWith('/default-service') ? { serviceIdentification: target.serviceIdentification } : c.body?.(target);
    return api()[c.method.toLowerCase() as 'get'](c.path(target), { token, json });
  };

  before(async () => {
    mine = await tenant();
    theirs = await tenant();
    ids = await idsOf(mine);
    otherIds = await idsOf(theirs);
  });
  after(async () => {
    await mine.receiver.close();
    await theirs.receiver.close();
  });

  it('covers every declared Admin route but the public ones (signing in, reset links), once, and mounts them all', () => {
    const declared = ADMIN_ROUTES.map(routeName);
    expect(new Set(declared).size, 'a route declared twice').to.equal(declared.length);
    expect(PUBLIC_ADMIN_ROUTES).to.have.members([
      'POST /login',
      'GET /login',
      'POST /login/two-factor',
      'POST /password-reset',
      'GET /sso/start',
      'GET /sso/callback',
      'POST /sso/exchange',
    ]);
    expect(declared.filter((r) => !PUBLIC_ADMIN_ROUTES.includes(r))).to.have.members(CASES.map((c) => `${c.method} ${c.route}`));
    type Layer = { path: string; methods: string[] };
    const mounted = (adminRouter() as unknown as { stack: Layer[] }).stack.flatMap((layer) =>
      layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${layer.path.replace(/^\/adminApi/, '')}`),
    );
    expect(mounted).to.have.members(declared);
  });

  it('answers 403 without the permissions and serves with them, for every route and grant', async () => {
    const sets: string[][] = [
      [],
      ...PERMISSIONS.map((p) => [p]),
      ['*'],
      ['deliveries:read', 'conversations:read'],
      ['deliveries:manage', 'conversations:read'],
      // What sends conversation content elsewhere: allowed only with the pair.
      ['services:edit', 'conversations:read'],
      ['accounts:edit', 'conversations:read'],
    ];
    expect(PERMISSIONS).to.include.members(['deliveries:read', 'deliveries:manage', 'conversations:read']);
    const cells: string[] = [];
    for (const everywhere of [false, true]) {
      const tokens = await Promise.all(
        sets.map((set) => operatorToken(set.map((permission) => ({ permission, accountId: everywhere ? null : ids.accountId })))),
      );
      // The operators one after another would take long: each walks every route, side by side.
      await Promise.all(
        sets.map(async (set, n) => {
          const token = tokens[n] ?? '';
          // The last case signs out: the field cases go before it.
          for (const c of [...CASES.slice(0, -1), ...FIELD_CASES, ...CASES.slice(-1)]) {
            const allowed = (everywhere || !c.everywhere) && c.needs.every((p) => holds(set, p));
            const answer = await call(c, token, ids);
            const cell = `${c.method} ${c.route} with [${set.join(', ')}] ${everywhere ? 'everywhere' : 'on the account'}`;
            cells.push(cell);
            if (allowed) {
              expect(answer.status, `${cell}: ${answer.text}`).to.equal(c.allowed);
            } else {
              expect(answer.status, `${cell}: ${answer.text}`).to.equal(403);
              expect(answer.body.notifications[0]?.message, cell).to.equal('permission_denied');
            }
          }
        }),
      );
    }
    expect(cells).to.have.length(2 * sets.length * (CASES.length + FIELD_CASES.length));
  });

  it('keeps conversation content from accounts:read alone: the deliveries log needs conversations:read', async () => {
    const reader = await operatorToken([{ permission: 'accounts:read', accountId: ids.accountId }]);
    const log = await api().get(`/adminApi/services/${ids.serviceId}/deliveries`, { token: reader });
    expect(log.status).to.equal(403);
    const both = await operatorToken([
      { permission: 'deliveries:read', accountId: ids.accountId },
      { permission: 'conversations:read', accountId: ids.accountId },
    ]);
    const allowed = await api().get<unknown[]>(`/adminApi/services/${ids.serviceId}/deliveries`, { token: both });
    expect(allowed.status).to.equal(200);
    expect(allowed.body.data).to.have.length.greaterThan(0);
    // Held on different accounts, the two do not combine.
    const split = await operatorToken([
      { permission: 'deliveries:read', accountId: ids.accountId },
      { permission: 'conversations:read', accountId: otherIds.accountId },
    ]);
    expect((await api().get(`/adminApi/services/${ids.serviceId}/deliveries`, { token: split })).status).to.equal(403);
  });

  it('lists only the accounts where accounts:read is held', async () => {
    const mineOnly = await operatorToken([{ permission: 'accounts:read', accountId: ids.accountId }]);
    const listed = await api().get<Array<{ id: number }>>('/adminApi/accounts', { token: mineOnly });
    expect(listed.body.data.map((a) => a.id)).to.deep.equal([ids.accountId]);
    const everywhere = await operatorToken([{ permission: 'accounts:read', accountId: null }]);
    const all = await api().get<Array<{ id: number }>>('/adminApi/accounts', { token: everywhere });
    expect(all.body.data.map((a) => a.id)).to.include.members([ids.accountId, otherIds.accountId]);
  });

  it("answers another account's Service or delivery exactly as an unknown id", async () => {
    const token = await operatorToken([{ permission: '*', accountId: ids.accountId }]);
    const unknown: Ids = { ...otherIds, serviceId: 2147483000, deliveryId: UNKNOWN_UUID };
    for (const c of CASES.filter((x) => x.record)) {
      const foreign = await call(c, token, otherIds);
      const missing = await call(c, token, unknown);
      const own = await call(c, token, ids);
      expect(own.status, `${c.method} ${c.route} on its own account`).to.equal(c.allowed);
      expect(foreign.status, `${c.method} ${c.route}: ${foreign.text}`).to.equal(404);
      expect(comparable(foreign, [otherIds.deliveryId, String(otherIds.serviceId)]), `${c.method} ${c.route}`).to.deep.equal(
        comparable(missing, [unknown.deliveryId, String(unknown.serviceId)]),
      );
      expect(foreign.body.notifications[0]?.message).to.be.oneOf(['service_not_found', 'delivery_not_found']);
    }
    // Routes naming the account in the path: 403 for another account, existing or not, alike.
    for (const c of CASES.filter((x) => !x.record && !x.everywhere && !x.noAccount)) {
      const foreign = await call(c, token, otherIds);
      const missing = await call(c, token, { ...otherIds, accountId: 2147483000 });
      expect(foreign.status, `${c.method} ${c.route}`).to.equal(403);
      expect(comparable(foreign, [String(otherIds.accountId)])).to.deep.equal(comparable(missing, ['2147483000']));
    }
    // Nothing of the other account changed.
    const keys = await api().get<Array<{ revokedAt: string | null }>>(`/adminApi/services/${otherIds.serviceId}/keys`, {
      token: await adminToken(),
    });
    expect(keys.body.data.every((k) => k.revokedAt === null)).to.equal(true);
  });
});
