// Where a committed transaction's notices and hand-offs go, by plain calls: this node's gateway
// (realtime/gateway.ts publishes to sockets on every node) and this node's delivery worker
// (deliveries/worker.ts adopts the deliveries leased to it, or claims). server.ts connects them;
// the transaction runners (run.ts, group-commit.ts) call deliver() after each commit.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AnyNotice } from '../../conversations/notice-kinds.ts';
import type { ClaimedWebhook } from '../../deliveries/claimed.ts';
import type { Committed, HandoffTarget } from './transaction.ts';

export interface NoticeSink {
  publish(notice: AnyNotice): void;
}

export interface HandoffSink {
  /** How many deliveries it takes now; null while it is behind, full or stopping. */
  handoffTarget(): HandoffTarget | null;
  /** Deliveries leased to it by a commit; `due`: others became due unheld, so it should claim. */
  takeOver(handoffs: readonly ClaimedWebhook[], due: boolean): void;
}

export class Outlets {
  gateway: NoticeSink | undefined;
  worker: HandoffSink | undefined;

  /** For Transaction: asked at the time of the statement that leases. */
  readonly target = (): HandoffTarget | null => this.worker?.handoffTarget() ?? null;

  /** Hands a committed transaction's notices to the gateway, then its deliveries to the worker. */
  deliver({ notices, handoffs, due }: Committed): void {
    if (this.gateway) for (const notice of notices) this.gateway.publish(notice);
    if (handoffs.length > 0 || due) this.worker?.takeOver(handoffs, due);
  }
}

/** One node's outlets per ORM (tests run several nodes in one process), by the ORM's configuration, which forks share. */
const byOrm = new WeakMap<object, Outlets>();

export function outletsOf(em: EntityManager): Outlets {
  let outlets = byOrm.get(em.config);
  if (!outlets) {
    outlets = new Outlets();
    byOrm.set(em.config, outlets);
  }
  return outlets;
}
