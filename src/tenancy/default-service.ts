// PUT /adminApi/accounts/{id}/default-service: an operator picks the account's default Service
// (the owner of users created from now on). A real change is announced to every Service of the
// account as a changeDefaultService action.
import { transaction } from '../db/tx/run.ts';
import { recordNote } from '../audit/entries.ts';
import type { AuditNote } from '../audit/context.ts';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema, ServiceSchema, type Account } from '../db/entities/index.ts';
import { accountChanged, notify } from '../conversations/notices.ts';
import { enqueue } from '../deliveries/outbox.ts';
import { notFound } from '../errors.ts';
import { changeDefaultServicePayload } from '../presenters/webhook-payloads.ts';

export async function changeDefaultService(
  em: EntityManager,
  input: { accountId: number; serviceIdentification: string; operatorIdentifier: string },
  audit?: AuditNote,
): Promise<{ account: Account; changed: boolean }> {
  return transaction(em, async (tx) => {
    const account = await tx.em.findOne(AccountSchema, { id: input.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!account) throw notFound('account_not_found');
    const services = await tx.em.find(ServiceSchema, { accountId: account.id }, { orderBy: { id: 'asc' } });
    const next = services.find((s) => s.identification === input.serviceIdentification);
    if (!next) throw notFound('service_not_found');
    if (next.id === account.defaultServiceId) return { account, changed: false };
    const previous = services.find((s) => s.id === account.defaultServiceId);
    account.defaultServiceId = next.id;
    // The Service API shows the account's default Service (GET /users/{id}): read afresh everywhere.
    notify(tx, accountChanged(account.id));
    await recordNote(tx.em, audit, {
      accountId: account.id,
      target: { accountId: account.id },
      changed: ['defaultServiceId'],
    });
    await tx.em.flush();
    // An account with only its inbox has no default yet (the first webhook Service becomes it):
    // choosing the inbox then is no change of a default, and no webhook Service is there to tell.
    if (!previous) return { account, changed: true };
    await enqueue(tx, {
      kind: 'action',
      payload: changeDefaultServicePayload({
        account,
        oldDefault: previous,
        newDefault: next,
        initiatedBy: input.operatorIdentifier,
      }),
      recipients: services.map((s) => s.id),
      orderingKey: null,
    });
    return { account, changed: true };
  });
}
