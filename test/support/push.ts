// Stand-ins for the far ends of pushes, as real loopback HTTP servers: Google's token endpoint
// (it verifies the JWT bearer grant's signature with the service account's public key), FCM's
// send endpoint, and a customer's OAuth token endpoint. A customer's push webhook is a plain
// Receiver. Also: a server of its own pointed at them, and a tenant with a registered device.
import { createPublicKey, generateKeyPairSync, verify as verifySignature } from 'node:crypto';
import { expect } from 'chai';
import { adminToken, type AccountData, type CreatedServiceData } from './factories.ts';
import { client, type Client } from './http.ts';
import { Receiver, type Received } from './receiver.ts';
import { startTestServer, type TestServer } from './server.ts';
import { Widget } from './widget.ts';

export interface ServiceAccount {
  project_id: string;
  client_email: string;
  private_key: string;
  publicKey: string;
}

/** A Google service account as a test makes it: a fresh RSA key, generated now. */
export function serviceAccount(projectId = 'palaver-test'): ServiceAccount {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    project_id: projectId,
    client_email: `push@${projectId}.iam.gserviceaccount.com`,
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** The claims of a JWT whose RS256 signature verifies with `publicKey`; null otherwise. */
export function verifiedJwt(assertion: string, publicKey: string): Record<string, unknown> | null {
  const [header, payload, signature] = assertion.split('.');
  if (!header || !payload || !signature) return null;
  const alg = (JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg?: string }).alg;
  if (alg !== 'RS256') return null;
  const ok = verifySignature(
    'RSA-SHA256',
    Buffer.from(`${header}.${payload}`),
    createPublicKey(publicKey),
    Buffer.from(signature, 'base64url'),
  );
  return ok ? (JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>) : null;
}

/** Google's token endpoint: a JWT bearer grant signed by the account's key gets an access token. */
export async function googleTokenStandIn(account: ServiceAccount, accessToken = 'ya29.test-access-token'): Promise<Receiver> {
  const receiver = await Receiver.start();
  receiver.respondWith((request) => {
    const form = new URLSearchParams(request.body);
    const claims =
      form.get('grant_type') === 'urn:ietf:params:oauth:grant-type:jwt-bearer'
        ? verifiedJwt(form.get('assertion') ?? '', account.publicKey)
        : null;
    if (!claims || claims.iss !== account.client_email) return { status: 400, body: JSON.stringify({ error: 'invalid_grant' }) };
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: accessToken, expires_in: 3600, token_type: 'Bearer' }),
    };
  });
  return receiver;
}

/** The client id and secret of HTTP Basic client authentication, each form-decoded (RFC 6749 §2.3.1). */
function basicCredentials(header: string | undefined): [string, string] | null {
  const match = /^Basic (.+)$/.exec(header ?? '');
  if (!match?.[1]) return null;
  const decoded = Buffer.from(match[1], 'base64').toString();
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  const formDecode = (v: string) => decodeURIComponent(v.replace(/\+/g, ' '));
  return [formDecode(decoded.slice(0, colon)), formDecode(decoded.slice(colon + 1))];
}

/** A customer's OAuth token endpoint: client credentials in HTTP Basic get a token. */
export async function oauthStandIn(clientId: string, clientSecret: string, accessToken = 'customer-token'): Promise<Receiver> {
  const receiver = await Receiver.start();
  receiver.respondWith((request) => {
    const credentials = basicCredentials(request.headers.authorization);
    const form = new URLSearchParams(request.body);
    if (credentials?.[0] !== clientId || credentials[1] !== clientSecret || form.get('grant_type') !== 'client_credentials') {
      return { status: 401, body: JSON.stringify({ error: 'invalid_client' }) };
    }
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: accessToken, expires_in: 3600, token_type: 'Bearer' }),
    };
  });
  return receiver;
}

/** The data map a push carried, as the apps parse it: `parley` JSON text, `message` text. */
export function parleyData(data: unknown): { parley: { type: string; object: Record<string, unknown> }; message?: string } {
  const map = data as Record<string, unknown>;
  expect(map.parley, 'the parley key is JSON text').to.be.a('string');
  for (const value of Object.values(map)) expect(value, 'every data value is a string').to.be.a('string');
  return {
    ...(map as { message?: string }),
    parley: JSON.parse(map.parley as string) as { type: string; object: Record<string, unknown> },
  };
}

export interface PushWorld {
  server: TestServer;
  api: Client;
  token: string;
}

/** A server of its own, its FCM addresses pointed at the stand-ins. */
export async function pushServer(fcmTokenUrl: string, fcmSendUrl: string, overrides: Record<string, unknown> = {}): Promise<PushWorld> {
  const server = await startTestServer({ push: { fcmTokenUrl, fcmSendUrl }, ...overrides });
  return { server, api: client(server.url), token: await adminToken(server.url) };
}

export interface PushTenant {
  account: AccountData;
  service: CreatedServiceData;
  widget: Widget;
  userId: number;
  /** Posts an agent message through the Service API. */
  agentSays(text: string, typeId?: number): Promise<number>;
  typing(isTyping: boolean): Promise<void>;
}

/** An account, its Service (no webhook), and a user registered from an app device with these push fields. */
export async function pushTenant(world: PushWorld, device: Record<string, unknown>): Promise<PushTenant> {
  const created = await world.api.post<AccountData>('/adminApi/accounts', { token: world.token, json: { name: 'Push account' } });
  expect(created.status, created.text).to.equal(201);
  const account = created.body.data;
  const made = await world.api.post<CreatedServiceData>(`/adminApi/accounts/${account.id}/services`, {
    token: world.token,
    json: { name: 'Desk', webhookUrl: null },
  });
  expect(made.status, made.text).to.equal(201);
  const service = made.body.data;
  const widget = new Widget(account, undefined, undefined, '', world.server.url);
  const registered = await widget.register({ type: 1, ...device });
  expect(registered.status, registered.text).to.equal(200);
  const userId = registered.body.data.userId;
  return {
    account,
    service,
    widget,
    userId,
    async agentSays(text, typeId = 2) {
      const sent = await world.api.post<{ id: number }>(`/users/${userId}/messages`, {
        token: service.apiKey,
        json: { message: text, typeId, agent: { id: 7, name: 'Ada' } },
      });
      expect(sent.status, sent.text).to.equal(201);
      return sent.body.data.id;
    },
    async typing(isTyping) {
      const answer = await world.api.post(`/users/${userId}/typing`, {
        token: service.apiKey,
        json: { isTyping, agent: { id: 7, name: 'Ada' } },
      });
      expect(answer.status, answer.text).to.equal(200);
    },
  };
}

/** Pushes of one account by state, read from the outbox itself. */
export async function pushRows(
  server: TestServer,
  accountId: number,
): Promise<Array<{ id: string; state: string; kind: string; device_id: number; attempts: number; last_error: string | null }>> {
  return server.deps.db.orm.em
    .fork()
    .getConnection()
    .execute(
      `select d.id, d.state, d.kind, d.device_id, d.attempts, d.last_error from deliveries d join devices v on v.id = d.device_id
        where v.account_id = ? order by d.seq`,
      [accountId],
    );
}

/** Waits (with a deadline) until every push of the account has ended. */
export async function pushesSettled(server: TestServer, accountId: number, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await pushRows(server, accountId);
    if (rows.every((r) => r.state !== 'pending')) return rows;
    if (Date.now() > deadline) throw new Error(`pushes still pending: ${JSON.stringify(rows)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export type { Received };
