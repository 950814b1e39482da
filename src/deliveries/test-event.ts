// "Send test event" of the dashboard: one signed POST to a Service's webhook, sent at once and
// answered with what the receiver said. Not an event of the specification, so it never enters
// the outbox (no retries, no log row, no place in the user's chain); it goes through the
// deliveries' sender (sender.ts: the same agents and address filter, got options, headers and
// Standard Webhooks signatures, with the secrets of secrets.ts), so a receiver that verifies it
// will verify real deliveries too.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account, Service } from '../db/entities/index.ts';
import type { TestEventResult } from '../contracts/test-event.ts';
import { serviceSecrets } from './secrets.ts';
import { WebhookSender } from './sender.ts';

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
  em: EntityManager,
  input: { account: Account; service: Service; initiatedBy: string },
  options: { allowPrivate: boolean; timeoutMs: number },
): Promise<TestEventResult> {
  const { service } = input;
  if (!service.webhookUrl) throw new Error('sendTestEvent needs a webhook URL');
  const webhookId = `test_${randomUUID()}`;
  const body = JSON.stringify(testEventPayload(input.account, service, input.initiatedBy));
  const secrets = await serviceSecrets(em, service.id);
  // A sender of its own, closed after the one request: its connection is not kept.
  const sender = new WebhookSender({ ...options, maxSockets: 1 });
  const started = Date.now();
  try {
    // A character is at most 4 bytes of UTF-8.
    const { outcome, answer } = await sender.sendReadingAnswer({ url: service.webhookUrl, id: webhookId, body, secrets }, 4 * BODY_SHOWN);
    const { status } = outcome;
    return {
      webhookId,
      status,
      ok: outcome.kind === 'delivered',
      durationMs: Date.now() - started,
      body: status === null || answer === null ? null : answer.slice(0, BODY_SHOWN),
      // An answer is not an error, whatever its status; no answer says why.
      error: status === null && 'error' in outcome ? outcome.error : null,
      signatures: secrets.length,
    };
  } finally {
    sender.close();
  }
}
