// The delivery loop every node runs: send each delivery this node holds, record the outcome,
// and take more. Most come by hand-off (handoff.ts): a transaction that writes a ready
// delivery, or makes one ready by ending the one before it, leases it to this node and hands
// it over when it commits, with no claim. The rest are claimed (leased, head of their chain):
// at once when a commit made deliveries due that nobody holds or the worker had no room, and
// every poll interval (retries coming due, deliveries written by other nodes). Claims run
// ahead of the sending: claimed deliveries wait in memory, so a slot freed by an answer is
// refilled at once rather than after a claim's round trip; how many wait for a Service follows
// what it sent during the last claim (waiting-room.ts). Outcomes are
// group-committed (src/db/tx/group-commit.ts): a busy node writes one transaction per
// batch of answers, not one per delivery, and an outcome that cannot be written fails alone.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { MikroORM } from '@mikro-orm/postgresql';
import { GroupCommit } from '../db/tx/group-commit.ts';
import { outletsOf } from '../db/tx/outlets.ts';
import type { HandoffTarget } from '../db/tx/transaction.ts';
import { EXPIRED_OFFERS_PER_SWEEP, expireOffers, handOffDisabled } from '../conversations/handover.ts';
import { notify } from '../conversations/notices.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { logFailedAttempt } from './attempt-log.ts';
import type { Metrics } from '../metrics.ts';
import type { Room } from './handoff.ts';
import { PushSender } from '../push/sender.ts';
import { pushKindOf } from '../push/settings.ts';
import { WebhookSender } from './sender.ts';
import { claimDue, postpone, releaseClaims, type ClaimedDelivery } from './claims.ts';
import { leaseMsFor } from './lease.ts';
import { writeOutcomes, type AttemptRecord, type OutcomeRecord } from './outcomes.ts';
import { secretsOf } from './secrets.ts';
import { settle, type AttemptOutcome } from './settle.ts';
import { WaitingRoom } from './waiting-room.ts';
import { EmailSender, type Presence } from '../email/sender.ts';

export interface WorkerDeps {
  orm: MikroORM;
  options: Config['webhooks'];
  push: Config['push'];
  /** Answers by email: sent only when `email.smtp` is set. */
  email: Config['email'] & { publicUrl: string | undefined };
  /** Whether a customer has a socket connected (an email waits while they do). */
  presence: Presence;
  logger: Logger;
  metrics: Metrics;
}

/** How often the worker ends timed-out handover offers: an offer lasts at least 10 s. */
const OFFER_SWEEP_MS = 1000;

/**
 * Emails (bucket 0) in flight per node, at most: each is an SMTP connection of its own to the
 * one relay, and relays cap a client's connections (Postfix at 50, hosted relays often lower).
 * `webhooks.maxPerService` (64) is sized for a bot answering every conversation, not for them.
 */
const EMAILS_IN_FLIGHT = 16;

export class DeliveryWorker {
  readonly node = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly sender: WebhookSender;
  private readonly pushes: PushSender;
  /** HTTP attempts under way, by delivery id. */
  private readonly inFlight = new Map<string, Promise<AttemptOutcome>>();
  private readonly emails: EmailSender | undefined;
  /** Claimed (leased), waiting for a free slot, in due order. */
  private readonly waiting: Array<{ delivery: ClaimedDelivery; claimedAt: number }> = [];
  /** Outcomes being written. */
  private readonly recording = new Set<Promise<void>>();
  /** Attempts under way per bucket (a Service, or an account's pushes: see ClaimedDelivery). */
  private readonly perBucket = new Map<number, number>();
  /** How many may wait in `waiting` per bucket, beside its slots. */
  private readonly waitingRoom = new WaitingRoom((bucket) => this.limitOf(bucket));
  private readonly leaseMs: number;
  private stopped = false;
  private claimWaiters: Array<() => void> = [];
  /**
   * More may be due than this node holds: the last claim was cut short (in all, or for a
   * bucket), or a commit left due deliveries unheld. Hand-offs wait meanwhile, so that what
   * waits in the table goes out before what comes after it.
   */
  private behind = false;
  /** Since when (performance.now()) `behind` has held without a break; null while caught up. */
  private behindSince: number | null = null;
  private nudged = false;
  /** A hand-off of switched-off Services' conversations failed: the loop runs it again. */
  private handOffAgain = false;
  /** When the loop next ends timed-out offers (sweepOffers()); nextClaim() asks for it at once. */
  private nextSweepAt = 0;
  private sweepNow = false;
  private wake: (() => void) | undefined;
  private running: Promise<void> | undefined;
  /** Outcomes handed in while a batch is being written go together in the next one. */
  private readonly outcomes: GroupCommit<OutcomeRecord, void>;

  constructor(private readonly deps: WorkerDeps) {
    const { options } = deps;
    this.sender = new WebhookSender({
      allowPrivate: options.allowPrivate,
      timeoutMs: options.timeoutMs,
      maxSockets: options.maxPerService,
    });
    this.pushes = new PushSender(this.sender, {
      tokenUrl: deps.push.fcmTokenUrl,
      sendUrl: deps.push.fcmSendUrl,
      timeoutMs: options.timeoutMs,
    });
    const { email } = deps;
    this.emails =
      email.smtp && email.publicUrl && email.linkSecret
        ? new EmailSender({ ...email, smtp: email.smtp, publicUrl: email.publicUrl, linkSecret: email.linkSecret }, deps.presence)
        : undefined;
    this.leaseMs = leaseMsFor(options.timeoutMs);
    this.outcomes = new GroupCommit({
      name: 'delivery',
      em: () => deps.orm.em.fork(),
      logger: deps.logger,
      maxBatch: 500,
      // A batch is written whole or not at all; GroupCommit then writes its records one by one,
      // so only a record that cannot be written stays unrecorded (and is sent again once its lease runs out).
      write: async (tx, batch) => {
        const serviceIds = await writeOutcomes(tx, this.node, batch);
        // The dashboard's counts of these Services change with this commit.
        if (serviceIds.length > 0) notify(tx, { kind: 'deliveries', serviceIds });
        return batch.map(() => ({ ok: true, value: undefined }));
      },
    });
  }

  start(): void {
    // Committed transactions of this node hand their deliveries here (handoffTarget, takeOver).
    outletsOf(this.deps.orm.em).worker = this;
    this.running = this.loop();
  }

  /** This node's worker as a committing transaction may lease to it now (handoff.ts); null when it takes none. */
  handoffTarget(): HandoffTarget | null {
    const free = this.room();
    return free ? { node: this.node, leaseMs: this.leaseMs, free } : null;
  }

  /** Called with what a committed transaction leased to this node, and whether it left deliveries due unheld. */
  takeOver(claims: readonly ClaimedDelivery[], due: boolean): void {
    if (claims.length > 0) this.adopt(claims);
    // Due and unheld (a hand-off refused, a push): claims take over until they catch up.
    if (due) {
      this.setBehind(true);
      this.nudge();
    }
  }

  /**
   * How long this node has had more deliveries due than it holds, without a break (ms; 0 once a
   * claim has caught up). With the event loop full, the admission's sign that the node takes
   * customers' messages faster than it delivers them (http/admission.ts).
   */
  behindMs(): number {
    return this.behindSince === null ? 0 : performance.now() - this.behindSince;
  }

  private setBehind(behind: boolean): void {
    this.behind = behind;
    if (!behind) this.behindSince = null;
    else this.behindSince ??= performance.now();
  }

  /** Claim now rather than at the next poll. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  /**
   * Resolves once a claim that began after this call has run and what it took was handed to the
   * sender: whatever was due by then is in flight now, or was not taken. Tests assert "nothing more
   * is sent" after it, on the rows, instead of waiting a while.
   */
  nextClaim(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.claimWaiters.push(resolve));
    this.sweepNow = true;
    this.nudge();
    return done;
  }

  /** True from the moment stop() is called: nothing is sent after it but the attempts then in flight. */
  get stopping(): boolean {
    return this.stopped;
  }

  /** Stops claiming and waits for the attempts in flight to be sent and recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const resolve of this.claimWaiters.splice(0)) resolve();
    this.wake?.();
    await this.running;
    await this.releaseWaiting(this.waiting.splice(0).map((w) => w.delivery));
    await Promise.allSettled(this.inFlight.values());
    await Promise.allSettled([...this.recording]);
    // Nothing is left in the group commit by now; drained all the same before the database closes.
    await this.outcomes.drain();
    this.sender.close();
    this.emails?.close();
  }

  private async loop(): Promise<void> {
    // A 410 switch-off whose hand-off a stop or crash cut short (see handOff()).
    await this.handOff();
    while (!this.stopped) {
      if (this.handOffAgain) await this.handOff();
      if (this.sweepNow || Date.now() >= this.nextSweepAt) await this.sweepOffers();
      this.nudged = false;
      const waiters = this.claimWaiters.splice(0);
      let claimed = 0;
      try {
        claimed = await this.claim();
      } catch (err) {
        this.deps.logger.warn({ err }, 'delivery claim failed; retrying at the next poll');
      }
      if (!this.stopped) this.pump();
      for (const resolve of waiters) resolve();
      if (this.stopped) break;
      const full = this.inFlight.size + this.waiting.length >= 2 * this.deps.options.maxInFlight;
      if (this.nudged || (claimed > 0 && !full)) continue;
      await this.sleep(this.deps.options.pollIntervalMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    }).then(() => {
      this.wake = undefined;
    });
  }

  /**
   * What this node takes, in all and per bucket: a bucket's slots and its waiting room (claimed
   * or handed over, unsent deliveries count), and in all twice the node's slots.
   */
  private limits(): { total: number; freeByBucket: Map<number, number> } {
    const { maxInFlight } = this.deps.options;
    // The emails' bucket always: a claim gives a bucket it is not told of `2 * maxPerService`.
    const held = new Map([[0, 0], ...this.perBucket]);
    for (const { delivery } of this.waiting) held.set(delivery.bucket, (held.get(delivery.bucket) ?? 0) + 1);
    const freeByBucket = new Map<number, number>();
    for (const [bucket, busy] of held) freeByBucket.set(bucket, this.limitOf(bucket) + this.waitingRoom.of(bucket) - busy);
    return { total: 2 * maxInFlight - this.inFlight.size - this.waiting.length, freeByBucket };
  }

  /** Attempts in flight at most for a bucket: a Service's, an account's pushes, or the emails. */
  private limitOf(bucket: number): number {
    const { maxPerService } = this.deps.options;
    return bucket === 0 ? Math.min(EMAILS_IN_FLIGHT, maxPerService) : maxPerService;
  }

  /** Hand-offs (handoff.ts): within the claims' limits, and only while claims have caught up. */
  private room(): Room | null {
    if (this.stopped || this.behind) return null;
    const { total, freeByBucket } = this.limits();
    if (total <= 0) return null;
    const services = [...freeByBucket.keys()].filter((bucket) => bucket > 0);
    return {
      services,
      free: services.map((id) => Math.max(0, Math.min(total, freeByBucket.get(id) ?? 0))),
      otherwise: Math.min(total, 2 * this.deps.options.maxPerService),
    };
  }

  private async claim(): Promise<number> {
    const { maxPerService } = this.deps.options;
    const { total, freeByBucket } = this.limits();
    if (total <= 0) return 0;
    this.waitingRoom.claimStarts();
    let claimed: ClaimedDelivery[];
    try {
      claimed = await claimDue(this.deps.orm.em.fork(), {
        total,
        perBucket: 2 * maxPerService,
        freeByBucket,
        lease: { node: this.node, ms: this.leaseMs },
      });
    } finally {
      this.waitingRoom.claimEnded();
    }
    // Caught up unless the claim was cut short, in all or for a bucket, or could take nothing
    // for a bucket already full (what waits for it is unknown): then more may be due.
    const byBucket = new Map<number, number>();
    for (const delivery of claimed) byBucket.set(delivery.bucket, (byBucket.get(delivery.bucket) ?? 0) + 1);
    this.setBehind(
      claimed.length === total ||
        [...freeByBucket.values()].some((free) => free <= 0) ||
        [...byBucket].some(([bucket, n]) => n >= (freeByBucket.get(bucket) ?? 2 * maxPerService)),
    );
    this.deps.metrics.deliveriesTaken.inc({ how: 'claim' }, claimed.length);
    const claimedAt = Date.now();
    for (const delivery of claimed) this.waiting.push({ delivery, claimedAt });
    return claimed.length;
  }

  /** Deliveries leased to this node by the transaction that wrote them or made them ready (handoff.ts). */
  private adopt(claims: readonly ClaimedDelivery[]): void {
    const claimedAt = Date.now();
    for (const delivery of claims) this.waiting.push({ delivery, claimedAt });
    this.deps.metrics.deliveriesTaken.inc({ how: 'handoff' }, claims.length);
    // Stopped meanwhile: they go back with the rest of what waits (stop() releases it).
    this.pump();
  }

  /**
   * Sends waiting deliveries while slots are free, in due order, within each Service's limit.
   * One that waited so long that its lease could run out during its attempt goes back
   * unsent (another claim takes it again).
   */
  private pump(): void {
    if (this.stopped) return;
    const { maxInFlight, timeoutMs } = this.deps.options;
    const stale: ClaimedDelivery[] = [];
    for (let i = 0; i < this.waiting.length && this.inFlight.size < maxInFlight;) {
      const { delivery, claimedAt } = this.waiting[i] as (typeof this.waiting)[number];
      if (Date.now() - claimedAt > this.leaseMs - 2 * timeoutMs) {
        stale.push(delivery);
        this.waiting.splice(i, 1);
      } else if ((this.perBucket.get(delivery.bucket) ?? 0) < this.limitOf(delivery.bucket)) {
        this.waiting.splice(i, 1);
        this.dispatch(delivery);
      } else {
        i += 1;
      }
    }
    if (stale.length > 0) void this.releaseWaiting(stale);
  }

  private async releaseWaiting(deliveries: ClaimedDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    try {
      await releaseClaims(
        this.deps.orm.em.fork(),
        this.node,
        deliveries.map((d) => d.id),
      );
    } catch (err) {
      // Their leases run out and they are claimed again: nothing is lost.
      this.deps.logger.warn({ err }, 'releasing unsent claims failed');
    }
  }

  private dispatch(delivery: ClaimedDelivery): void {
    const { bucket } = delivery;
    this.perBucket.set(bucket, (this.perBucket.get(bucket) ?? 0) + 1);
    this.waitingRoom.attemptStarted(bucket);
    const release = () => {
      this.inFlight.delete(delivery.id);
      const left = (this.perBucket.get(bucket) ?? 1) - 1;
      if (left > 0) this.perBucket.set(bucket, left);
      else this.perBucket.delete(bucket);
      // The slot goes to a waiting delivery now, not after the loop's next claim (a round trip,
      // behind whatever else waits for the pool) or the next hand-off: under load, slots stood
      // empty that long while deliveries waited in memory, and the outbox grew. The loop claims
      // more behind it when more may be due than this node holds (see `behind`). Otherwise
      // commits wake the loop.
      this.pump();
      if (this.behind) this.nudge();
    };
    // The HTTP slot is free once the answer is in; the lease keeps the row ours until the
    // outcome is written, and stop() waits for that write too.
    const startedAt = new Date();
    const started = performance.now();
    const sent = this.attempt(delivery).finally(release);
    const recorded = sent
      .then((outcome) => this.record(delivery, outcome, { startedAt, durationMs: performance.now() - started }))
      .catch((err: unknown) => {
        // The lease runs out and the delivery is attempted again: at least once, never lost.
        this.deps.logger.error({ err, deliveryId: delivery.id }, 'recording a delivery attempt failed');
      })
      .finally(() => {
        // The next delivery of this chain, now ready, came with the commit (handoff.ts).
        this.recording.delete(recorded);
      });
    this.inFlight.set(delivery.id, sent);
    this.recording.add(recorded);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<AttemptOutcome> {
    if (delivery.deviceId !== null) return this.pushes.send(delivery);
    if (delivery.serviceId === null) {
      if (!this.emails) return { kind: 'retry', status: null, error: 'email.smtp is not configured on this node', retryAfterMs: null };
      return this.emails.send(this.deps.orm.em.fork(), delivery);
    }
    const started = process.hrtime.bigint();
    const outcome = await this.sender.send({
      url: delivery.webhookUrl,
      id: delivery.id,
      body: delivery.payload,
      secrets: secretsOf(delivery),
    });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.deps.metrics.deliveryAttemptSeconds.observe({ outcome: outcome.kind }, seconds);
    return outcome;
  }

  /**
   * Disabled Services (of `serviceIds`, else all) still owning conversations hand them to their
   * next Service or the account default, with the changeOwner payloads (handOffDisabled()). A
   * failure is logged, and the claim loop tries again (all of them) at its next turn.
   */
  private async handOff(serviceIds?: readonly number[]): Promise<void> {
    if (!serviceIds) this.handOffAgain = false;
    try {
      const moved = await handOffDisabled(this.deps.orm.em.fork(), serviceIds);
      if (moved > 0) this.deps.logger.info({ serviceIds, moved }, 'conversations of switched-off Services handed over');
    } catch (err) {
      this.deps.logger.warn(
        { err, serviceIds },
        'handing over the conversations of switched-off Services failed; retrying at the next poll',
      );
      this.handOffAgain = true;
    }
  }

  /**
   * Ends the offers that timed out (expireOffers()), at most every OFFER_SWEEP_MS, and on at
   * the next turn while a sweep found a full batch. Every node's worker sweeps; SKIP LOCKED
   * shares the rows. A failure is logged and the next sweep tries again.
   */
  private async sweepOffers(): Promise<void> {
    this.sweepNow = false;
    this.nextSweepAt = Date.now() + OFFER_SWEEP_MS;
    try {
      const ended = await expireOffers(this.deps.orm.em.fork());
      if (ended >= EXPIRED_OFFERS_PER_SWEEP) this.nextSweepAt = 0;
    } catch (err) {
      this.deps.logger.warn({ err }, 'ending timed-out handover offers failed; retrying at the next sweep');
    }
  }

  /**
   * Counted once the outcome is committed: the figures are what the database holds. Webhooks
   * count delivered, failed (to be retried, or 410) and dead; pushes sent, failed and dead (an
   * unregistered token too); emails sent, skipped (nothing to send), failed and dead. A
   * postponed email (the customer is connected) goes back without counting as an attempt.
   */
  private async record(
    delivery: ClaimedDelivery,
    sent: AttemptOutcome,
    timing: Pick<AttemptRecord, 'startedAt' | 'durationMs'>,
  ): Promise<void> {
    const settled = settle(delivery, sent, timing, {
      retrySchedule: this.deps.options.retrySchedule,
      postponeMs: this.deps.email.unseenAfterSeconds * 1000,
    });
    if (settled.type === 'postpone') {
      await postpone(this.deps.orm.em.fork(), this.node, delivery.id, settled.at, settled.reason);
      return;
    }
    const { record, result } = settled;
    await this.outcomes.send(record);
    const { metrics, logger } = this.deps;
    const failed = result === 'retry' || result === 'gone' ? 'failed' : 'dead';
    if (delivery.deviceId !== null) {
      const kind = pushKindOf(delivery.pushType ?? 0) ?? 'none';
      metrics.pushes.inc({ kind, outcome: result === 'delivered' ? 'sent' : failed });
    } else if (delivery.serviceId === null) {
      metrics.emails.inc({ outcome: result === 'delivered' ? 'sent' : result === 'skipped' ? 'skipped' : failed });
    } else {
      metrics.deliveries.inc({ outcome: result === 'delivered' ? 'delivered' : failed });
    }
    if (record.type === 'gone') {
      logger.warn({ serviceId: record.serviceId }, 'webhook answered 410 Gone: Service disabled');
      // Its switch-off is committed: its conversations go on, never silently.
      await this.handOff([record.serviceId]);
    } else if (record.type === 'unregistered')
      logger.info({ deviceId: record.deviceId }, 'push token refused by its push service: removed from the device');
    else if (record.type === 'retry' || record.type === 'dead') {
      const nextAttemptAt = record.type === 'retry' ? record.nextAttemptAt : null;
      logFailedAttempt(logger, delivery, { status: record.status, error: record.error, nextAttemptAt });
    }
  }
}
