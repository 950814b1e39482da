// One transaction as an object: what a write does is a call on it, visible where it is called.
// It carries the connection a held transaction runs on (held.ts; none for the ORM's own
// transactions, run.ts), the chain locks it holds (deliveries/outbox.ts takes each once), the
// notices recorded for the gateway (conversations/notices.ts) and the deliveries leased to this
// node's worker (deliveries/handoff.ts). Once it committed its runner reads committed() and hands
// that on by plain calls (outlets.ts): notices to the gateway, hand-offs to the worker. A
// transaction that rolled back is dropped with everything it carried.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AnyNotice } from '../../conversations/notice-kinds.ts';
import type { ClaimedWebhook } from '../../deliveries/claimed.ts';
import type { Connection } from './connection.ts';

/** Per Service (`services[i]` takes `free[i]` more), and `otherwise` for any other Service. */
export interface Room {
  services: number[];
  free: number[];
  otherwise: number;
}

/** This node's worker as it can take deliveries leased now: its name, its lease, its room. */
export interface HandoffTarget {
  /** The worker's node name, written as `claimed_by`. */
  node: string;
  leaseMs: number;
  free: Room;
}

/** What a committed transaction hands on. */
export interface Committed {
  /** For the gateway, in the order they were recorded. */
  notices: AnyNotice[];
  /** Leased to this node's worker by the transaction's statements. */
  handoffs: ClaimedWebhook[];
  /** Deliveries became due that nobody holds: the worker should claim. */
  due: boolean;
}

export class Transaction {
  readonly notices: AnyNotice[] = [];
  readonly handoffs: ClaimedWebhook[] = [];
  private due = false;
  /** Chain locks (`service:key`) taken in this transaction, so each is taken once. */
  private readonly chains = new Set<string>();

  constructor(
    /** The ORM in this transaction; a held transaction's refuses every use (held.ts). */
    readonly em: EntityManager,
    /** The connection a held transaction runs on; null for the ORM's transactions. */
    readonly connection: Connection | null,
    /** Asks this node's worker, at the time of the statement, how many deliveries it takes. */
    private readonly target: () => HandoffTarget | null,
  ) {}

  /** The worker that can take deliveries leased in this transaction now, and how many; null if none. */
  handoffTarget(): HandoffTarget | null {
    return this.target();
  }

  /** Deliveries this transaction leased to this node's worker: handed over once it commits. */
  handOff(claims: readonly ClaimedWebhook[]): void {
    this.handoffs.push(...claims);
  }

  /** Deliveries became due in this transaction that nobody holds: the worker claims once it commits. */
  markDue(): void {
    this.due = true;
  }

  holdsChain(serviceId: number, key: number): boolean {
    return this.chains.has(`${serviceId}:${key}`);
  }

  /** Records chain locks this transaction took: enqueuing on them spends no statement on locks. */
  chainsLocked(chains: ReadonlyArray<readonly [number, number]>): void {
    for (const [serviceId, key] of chains) this.chains.add(`${serviceId}:${key}`);
  }

  /** What it hands on: read by its runner once it committed. */
  committed(): Committed {
    return { notices: this.notices, handoffs: this.handoffs, due: this.due };
  }
}
