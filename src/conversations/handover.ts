// The handover protocol (docs/decisions/switchboard.md): pass, offer, accept and release, each
// in one transaction under the user's row lock. A step that already holds answers unchanged and
// writes nothing; a refused step answers its code and delivers a failure event to the caller.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema, ServiceSchema, UserSchema, type Account, type Service, type User } from '../db/entities/index.ts';
import { enqueue } from '../deliveries/outbox.ts';
import { AppError, conflict, notFound } from '../errors.ts';
import { handoverPayload, type HandoverNote, type HandoverStep } from '../presenters/webhook-payloads.ts';
import { pgIntArray } from '../db/pg-arrays.ts';
import { transaction } from '../db/tx/run.ts';
import type { Transaction } from '../db/tx/transaction.ts';
import { moveOwner } from './owners.ts';
import { standbyOf } from './standby.ts';
import { lockUsers } from './users.ts';

export interface HandoverInput {
  account: Pick<Account, 'id'>;
  /** The calling Service. */
  caller: Service;
  userId: number;
  step: HandoverStep;
  /** pass and offer: the target; absent, the caller's next Service (`handoverNext`). */
  targetIdentification?: string | null | undefined;
  reason: string | null;
  metadata: Record<string, unknown> | null;
  /** offer: how long the target has to accept. */
  timeoutSeconds?: number | undefined;
}

/** How long an offer waits for its accept unless the offer says otherwise. */
export const OFFER_TIMEOUT_SECONDS = 300;

/** The codes of refused steps: each delivers a failure event to the caller. */
export const HANDOVER_REFUSALS = [
  'not_in_control',
  'not_pending',
  'offer_expired',
  'target_disabled',
  'target_is_owner',
  'target_cannot_accept',
  'no_next_service',
  'service_not_found',
] as const;

interface HandoverRow {
  pending_service_id: number | null;
  offered_by_service_id: number | null;
  offer_expires_at: Date | string | null;
  last_step: HandoverStep | null;
  last_by_service_id: number | null;
}

/** A conversation's switchboard: who is active, who is offered it, who listens. */
export interface HandoverState {
  active: Service;
  pending: { service: Service; offeredBy: Service | null; expiresAt: Date } | null;
  standby: Service[];
}

export async function handoverStep(em: EntityManager, input: HandoverInput): Promise<{ user: User; changed: boolean }> {
  try {
    return await transaction(em, (tx) => step(tx, input));
  } catch (err) {
    if (err instanceof AppError && (HANDOVER_REFUSALS as readonly string[]).includes(err.code)) {
      await deliverFailure(em, input, err.code);
    }
    throw err;
  }
}

async function step(t: Transaction, input: HandoverInput): Promise<{ user: User; changed: boolean }> {
  const tx = t.em;
  const { caller } = input;
  const user = await tx.findOne(UserSchema, { id: input.userId, accountId: input.account.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!user) throw notFound('user_not_found');
  // The default Service as it is now, not as the caller's kept snapshot has it.
  const account = await tx.findOneOrFail(AccountSchema, { id: input.account.id });
  const row = await handoverRow(tx, user.id);
  const note: HandoverNote = { step: input.step, reason: input.reason, metadata: input.metadata };
  const owner = await tx.findOneOrFail(ServiceSchema, { id: user.ownerServiceId });
  const unchanged = { user, changed: false };
  // A repeat of the conversation's last step by the Service that took it (an answer lost on
  // the way) is answered as done.
  const repeat = row?.last_step === input.step && row.last_by_service_id === caller.id;

  if (input.step === 'accept') {
    if (owner.id === caller.id) return unchanged;
    if (!row || row.pending_service_id !== caller.id) throw conflict('not_pending');
    if (expired(row)) throw conflict('offer_expired');
    await moveOwner(t, { account, user, oldOwner: owner, newOwner: caller, initiatedBy: caller, handover: note });
    return { user, changed: true };
  }

  if (owner.id !== caller.id) {
    if (repeat && input.step !== 'offer') return unchanged;
    throw conflict('not_in_control');
  }

  if (input.step === 'release') {
    const target = await releaseTarget(tx, caller, account);
    await moveOwner(t, { account, user, oldOwner: owner, newOwner: target, initiatedBy: caller, handover: note });
    return { user, changed: true };
  }

  const target = await namedOrNext(tx, caller, input.targetIdentification);
  if (target.disabledAt) throw conflict('target_disabled');
  if (input.step === 'pass') {
    if (target.id === owner.id) return unchanged;
    await moveOwner(t, { account, user, oldOwner: owner, newOwner: target, initiatedBy: caller, handover: note });
    return { user, changed: true };
  }

  // offer
  if (target.id === owner.id) throw conflict('target_is_owner');
  if (target.kind === 'inbox') throw conflict('target_cannot_accept');
  if (row && repeat && row.pending_service_id === target.id && !expired(row)) return unchanged;
  const expiresAt = new Date(Date.now() + (input.timeoutSeconds ?? OFFER_TIMEOUT_SECONDS) * 1000);
  await tx.getConnection().execute(
    `insert into conversation_handovers (user_id, pending_service_id, offered_by_service_id, offer_reason, offer_metadata,
       offer_expires_at, last_step, last_by_service_id)
     values (?, ?, ?, ?, ?, ?, 'offer', ?)
     on conflict (user_id) do update set pending_service_id = excluded.pending_service_id,
       offered_by_service_id = excluded.offered_by_service_id, offer_reason = excluded.offer_reason,
       offer_metadata = excluded.offer_metadata, offer_expires_at = excluded.offer_expires_at,
       last_step = 'offer', last_by_service_id = excluded.last_by_service_id, offer_expiry_told_at = null, updated_at = now()`,
    [user.id, target.id, caller.id, input.reason, input.metadata ? JSON.stringify(input.metadata) : null, expiresAt, caller.id],
    'run',
    tx.getTransactionContext(),
  );
  await enqueue(t, {
    kind: 'handover',
    payload: handoverPayload({ account, user, initiatedBy: caller, note, offer: { from: caller, to: target, expiresAt } }),
    recipients: [caller.id, target.id],
    standby: await standbyOf(t, user.id),
    orderingKey: user.id,
  });
  return { user, changed: true };
}

function expired(row: HandoverRow): boolean {
  return row.offer_expires_at !== null && new Date(row.offer_expires_at).getTime() <= Date.now();
}

async function handoverRow(em: EntityManager, userId: number): Promise<HandoverRow | null> {
  const [row] = await em.getConnection().execute<HandoverRow[]>(
    `select pending_service_id, offered_by_service_id, offer_expires_at, last_step, last_by_service_id
         from conversation_handovers where user_id = ?`,
    [userId],
    'all',
    em.getTransactionContext(),
  );
  return row ?? null;
}

/** The named Service of the caller's account, or the caller's next one. */
async function namedOrNext(em: EntityManager, caller: Service, identification: string | null | undefined): Promise<Service> {
  if (identification) {
    const named = await em.findOne(ServiceSchema, { identification, accountId: caller.accountId });
    if (!named) throw notFound('service_not_found');
    return named;
  }
  const next = await nextOf(em, caller);
  if (!next) throw conflict('no_next_service');
  return next;
}

async function nextOf(em: EntityManager, service: Pick<Service, 'id' | 'handoverNextServiceId'>): Promise<Service | null> {
  // Read afresh: the caller's snapshot may be up to 10 s old.
  const fresh = await em.findOne(ServiceSchema, { id: service.id }, { refresh: true });
  const nextId = fresh?.handoverNextServiceId;
  return nextId == null ? null : em.findOne(ServiceSchema, { id: nextId });
}

/**
 * Where a release (or a Service switched off) hands a conversation: the Service's next one when
 * it is switched on, else the account's default when that is another Service and switched on.
 */
export async function releaseTarget(
  em: EntityManager,
  service: Pick<Service, 'id' | 'handoverNextServiceId'>,
  account: Pick<Account, 'defaultServiceId'>,
): Promise<Service> {
  const next = await nextOf(em, service);
  if (next && !next.disabledAt && next.id !== service.id) return next;
  const fallback = account.defaultServiceId == null ? null : await em.findOne(ServiceSchema, { id: account.defaultServiceId });
  if (fallback && !fallback.disabledAt && fallback.id !== service.id) return fallback;
  throw conflict('no_next_service');
}

/** The refused step as a failure event to its caller, on the user's chain, in a transaction of its own. */
async function deliverFailure(em: EntityManager, input: HandoverInput, code: string): Promise<void> {
  await transaction(em.fork(), async (tx) => {
    const user = await tx.em.findOne(UserSchema, { id: input.userId, accountId: input.account.id });
    const account = await tx.em.findOne(AccountSchema, { id: input.account.id });
    if (!user || !account) return;
    await enqueue(tx, {
      kind: 'handover',
      payload: handoverPayload({
        account,
        user,
        initiatedBy: input.caller,
        note: { step: input.step, reason: input.reason, metadata: input.metadata },
        failure: { code },
      }),
      recipients: [input.caller.id],
      orderingKey: user.id,
    });
  });
}

/** The conversation's active, pending (while the offer lasts) and standby Services. */
export async function handoverState(em: EntityManager, user: Pick<User, 'id' | 'ownerServiceId'>): Promise<HandoverState> {
  const active = await em.findOneOrFail(ServiceSchema, { id: user.ownerServiceId });
  const row = await handoverRow(em, user.id);
  let pending: HandoverState['pending'] = null;
  if (row?.pending_service_id != null && !expired(row) && row.offer_expires_at !== null) {
    const service = await em.findOneOrFail(ServiceSchema, { id: row.pending_service_id });
    const offeredBy = row.offered_by_service_id == null ? null : await em.findOne(ServiceSchema, { id: row.offered_by_service_id });
    pending = { service, offeredBy, expiresAt: new Date(row.offer_expires_at) };
  }
  const standbyIds = await standbyOf(em, user.id);
  const standby = standbyIds.length > 0 ? await em.find(ServiceSchema, { id: { $in: standbyIds } }, { orderBy: { id: 'asc' } }) : [];
  return { active, pending, standby };
}

/**
 * A standby Service reads but does not answer: its agent messages and typing are refused until
 * it holds control (judged when the call arrives). Services that do not listen on standby are
 * not judged here.
 */
export async function refuseStandbyAnswer(
  em: EntityManager,
  caller: Pick<Service, 'id' | 'accountId' | 'standby'>,
  userId: number,
): Promise<void> {
  if (caller.standby === 'none') return;
  const user = await em.findOne(UserSchema, { id: userId, accountId: caller.accountId }, { fields: ['ownerServiceId'] });
  if (user && user.ownerServiceId !== caller.id) throw conflict('not_in_control');
}

/**
 * A Service switched off hands every conversation it owns to its next Service, or else the
 * account's default, as a release with the reason `service_disabled`: the changeOwner payloads
 * are written in the caller's transaction. With nowhere to go (no next, the default is this
 * Service or off) the conversations stay. Returns how many were handed over.
 */
export async function handOffConversations(t: Transaction, service: Service): Promise<number> {
  const tx = t.em;
  const account = await tx.findOneOrFail(AccountSchema, { id: service.accountId });
  let target: Service;
  try {
    target = await releaseTarget(tx, service, account);
  } catch (err) {
    if (err instanceof AppError && err.code === 'no_next_service') return 0;
    throw err;
  }
  const owned = await tx.find(
    UserSchema,
    { ownerServiceId: service.id, mergedIntoUserId: null },
    { fields: ['id'], orderBy: { id: 'asc' } },
  );
  if (owned.length === 0) return 0;
  // The users' locks in id order, as every writer takes them; then each as it is under the lock.
  await lockUsers(
    tx,
    owned.map((user) => user.id),
  );
  const users = await tx.find(UserSchema, { id: { $in: owned.map((user) => user.id) } }, { refresh: true, orderBy: { id: 'asc' } });
  const note: HandoverNote = { step: 'release', reason: 'service_disabled', metadata: null };
  let moved = 0;
  for (const user of users) {
    if (user.ownerServiceId !== service.id || user.mergedIntoUserId != null) continue;
    await moveOwner(t, { account, user, oldOwner: service, newOwner: target, initiatedBy: service, handover: note });
    moved += 1;
  }
  return moved;
}

/**
 * Disabled Services that still own conversations hand them off (handOffConversations), each in
 * a transaction of its own under its row's lock, judged afresh there: a Service switched on
 * meanwhile keeps them. A 410 switches a Service off in the delivery engine's outcomes (raw SQL
 * in a held transaction), so the worker runs this after such a batch commits, and at its start
 * for a switch-off whose hand-off a crash cut short. Idempotent: what has moved is not found
 * again, and a Service with nowhere to go keeps its conversations. Returns how many moved.
 */
export async function handOffDisabled(em: EntityManager, serviceIds?: readonly number[]): Promise<number> {
  const ids = await em.getConnection().execute<Array<{ id: number }>>(
    `select s.id from services s
      where s.disabled_at is not null ${serviceIds ? 'and s.id = any(?::int[])' : ''}
        and exists (select 1 from users u where u.owner_service_id = s.id and u.merged_into_user_id is null)
      order by s.id`,
    serviceIds ? [pgIntArray(serviceIds)] : [],
  );
  let moved = 0;
  for (const { id } of ids) {
    moved += await transaction(em.fork(), async (tx) => {
      const service = await tx.em.findOne(ServiceSchema, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      return service?.disabledAt ? handOffConversations(tx, service) : 0;
    });
  }
  return moved;
}

/** How many timed-out offers one sweep ends (the rest at the next). */
export const EXPIRED_OFFERS_PER_SWEEP = 100;

/**
 * Ends offers that timed out unaccepted, in one transaction: marks each told
 * (`offer_expiry_told_at`; an expired offer is no offer to every step and read, and a late
 * accept is still refused `offer_expired`) and delivers `offerExpired` (the offer's fields) to
 * the offering and the offered Service, and the standby copies, through the outbox. The users' and the offers' rows are taken FOR UPDATE SKIP
 * LOCKED, so sweeps on several nodes share the work without waiting, and a step under way on a
 * conversation (which holds its user's lock) is left to finish: an owner change clears the offer
 * itself, silently. Returns how many offers ended.
 */
export async function expireOffers(em: EntityManager): Promise<number> {
  // Every node asks every second, and nothing is due almost always: that answer costs one
  // statement on the partial index, not a transaction (a third of the CPU, one round trip of two).
  const due = await em.getConnection().execute<Array<{ due: boolean }>>(
    `select exists (select 1 from conversation_handovers
                       where pending_service_id is not null and offer_expiry_told_at is null and offer_expires_at <= now()) as due`,
  );
  if (!due[0]?.due) return 0;
  return transaction(em, async (t) => {
    const rows = await t.em.getConnection().execute<
      Array<{
        user_id: number;
        pending_service_id: number;
        offered_by_service_id: number | null;
        offer_reason: string | null;
        offer_metadata: string | null;
        offer_expires_at: Date | string;
      }>
    >(
      `select h.user_id, h.pending_service_id, h.offered_by_service_id, h.offer_reason, h.offer_metadata, h.offer_expires_at
         from conversation_handovers h join users u on u.id = h.user_id
        where h.pending_service_id is not null and h.offer_expiry_told_at is null and h.offer_expires_at <= now()
        order by h.user_id limit ?
          for update of u, h skip locked`,
      [EXPIRED_OFFERS_PER_SWEEP],
      'all',
      t.em.getTransactionContext(),
    );
    if (rows.length === 0) return 0;
    await t.em
      .getConnection()
      .execute(
        `update conversation_handovers set offer_expiry_told_at = now(), updated_at = now() where user_id = any(?::int[])`,
        [pgIntArray(rows.map((row) => row.user_id))],
        'run',
        t.em.getTransactionContext(),
      );
    for (const row of rows) {
      const user = await t.em.findOneOrFail(UserSchema, { id: row.user_id });
      const account = await t.em.findOneOrFail(AccountSchema, { id: user.accountId });
      const to = await t.em.findOneOrFail(ServiceSchema, { id: row.pending_service_id });
      const from = row.offered_by_service_id == null ? null : await t.em.findOne(ServiceSchema, { id: row.offered_by_service_id });
      const offeredBy = from ?? (await t.em.findOneOrFail(ServiceSchema, { id: user.ownerServiceId }));
      await enqueue(t, {
        kind: 'handover',
        payload: handoverPayload({
          account,
          user,
          initiatedBy: offeredBy,
          note: {
            step: 'offer',
            reason: row.offer_reason,
            metadata: row.offer_metadata === null ? null : (JSON.parse(row.offer_metadata) as Record<string, unknown>),
          },
          offer: { from: offeredBy, to, expiresAt: new Date(row.offer_expires_at) },
          expired: true,
        }),
        recipients: [...new Set([offeredBy.id, to.id])],
        standby: await standbyOf(t, user.id),
        orderingKey: user.id,
      });
    }
    return rows.length;
  });
}
