// "Send test event" of the dashboard: one signed POST to a Service's webhook, sent at once and
// answered with what the receiver said. Not an event of the specification, so it never enters
// the outbox (no retries, no log row, no place in the user's chain); it is signed and filtered
// exactly as deliveries are (Standard Webhooks headers, the current and, during a rotation's
// grace period, the previous secret; no private addresses unless allowed), so a receiver that
// verifies it will verify real deliveries too.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import got, { RequestError } from 'got';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { Webhook } from 'standardwebhooks';
import type { Account, Service } from '../db/entities/index.ts';
import type { TestEventResult } from '../shared/test-event.ts';

/** What the dashboard shows of the receiver's answer: enough to debug, never a whole page. */
const BODY_SHOWN = 2048;

export function testEventPayload(account: Account, service: Service, initiatedBy: string, now = new Date()) {
  return {
    type: 'test',
    accountIdentification: account.identification,
    body: { action: 'test', metadata: '', initiatedBy, service: service.identification, sentAt: now.toISOString() },
  };
}

export async function sendTestEvent(
  input: { account: Account; service: Service; initiatedBy: string },
  options: { allowPrivate: boolean; timeoutMs: number },
): Promise<TestEventResult> {
  const { service } = input;
  if (!service.webhookUrl) throw new Error('sendTestEvent needs a webhook URL');
  const webhookId = `test_${randomUUID()}`;
  const body = JSON.stringify(testEventPayload(input.account, service, input.initiatedBy));
  const inGrace = service.previousSigningSecret && service.previousSecretExpiresAt && service.previousSecretExpiresAt > new Date();
  const secrets =
    inGrace && service.previousSigningSecret ? [service.signingSecret, service.previousSigningSecret] : [service.signingSecret];
  const timestamp = new Date();
  const signature = secrets.map((secret) => new Webhook(secret).sign(webhookId, timestamp, body)).join(' ');
  const agent = options.allowPrivate
    ? { http: new http.Agent(), https: new https.Agent() }
    : {
        http: new RequestFilteringHttpAgent({ allowPrivateIPAddress: false }),
        https: new RequestFilteringHttpsAgent({ allowPrivateIPAddress: false }),
      };
  const started = Date.now();
  try {
    const response = await got.post(service.webhookUrl, {
      body,
      agent,
      timeout: { request: options.timeoutMs },
      followRedirect: false,
      retry: { limit: 0 },
      throwHttpErrors: false,
      headers: {
        'user-agent': 'Palaver-Webhooks/1',
        'content-type': 'application/json',
        'webhook-id': webhookId,
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'webhook-signature': signature,
      },
    });
    const status = response.statusCode;
    return {
      webhookId,
      status,
      ok: status >= 200 && status < 300,
      durationMs: Date.now() - started,
      body: response.body.slice(0, BODY_SHOWN),
      error: null,
      signatures: secrets.length,
    };
  } catch (err) {
    const error = err instanceof RequestError ? `${err.code}: ${err.message}` : String(err);
    return { webhookId, status: null, ok: false, durationMs: Date.now() - started, body: null, error, signatures: secrets.length };
  } finally {
    agent.http.destroy();
    agent.https.destroy();
  }
}
