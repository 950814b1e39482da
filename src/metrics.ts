// Prometheus metrics. Each server has its own registry, so several servers in one process
// (the tests do that) never mix their figures.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EmbeddedReadings } from './db/embedded.ts';

export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** Attempts by what came of them: delivered, failed (to be retried), dead. */
  deliveries: Counter<'outcome'>;
  deliveryAttemptSeconds: Histogram<'outcome'>;
  /** Deliveries this node's worker took to send, by how: `handoff` (leased by the commit that wrote or promoted them) or `claim`. */
  deliveriesTaken: Counter<'how'>;
  /** Push attempts by push kind (fcm, webhook, oauth-webhook) and outcome (sent, failed and to be retried, dead). */
  pushes: Counter<'kind' | 'outcome'>;
  emails: Counter<'outcome'>;
  emailReplies: Counter<'outcome'>;
  /** Messages per group-committed transaction, by writer (client, agent). */
  messageBatchSize: Histogram<'writer'>;
  /** Batches tried in one statement (the embedded database's client writer), by whether it wrote them. */
  oneStatementBatches: Counter<'writer' | 'written'>;
  /** Rate-limit calls answered from this node's memory because Redis failed, by limiter. */
  redisFallbacks: Counter<'limiter'>;
  /** Client writes refused with 503 server_busy (http/admission.ts). */
  clientWritesRefused: Counter<'reason'>;
  /** Reads this node's client writes in progress at each scrape (set once the admission exists). */
  clientWritesInFlight: { read: () => number };
  /** Reads how long work waits for a database connection now, in ms (set once the pool is watched). */
  databaseWait: { read: () => number };
  /** Reads how long the Services' answers wait to be written now, in ms (set once the agents' writer exists). */
  answersWait: { read: () => number };
}

/**
 * `pendingDeliveries` is asked at each scrape, so the gauge is the database's figure, shared by all
 * nodes; `embedded` (the embedded database's readings) too, when there is one.
 */
export function createMetrics(pendingDeliveries: () => Promise<number>, embedded: EmbeddedReadings | null = null): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'palaver_' });
  const httpDuration = new Histogram({
    name: 'palaver_http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'palaver_delivery_attempts_total',
    help: 'Webhook delivery attempts made by this node, by outcome (delivered, failed and to be retried, dead)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const deliveryAttemptSeconds = new Histogram({
    name: 'palaver_delivery_attempt_duration_seconds',
    help: 'Duration of one webhook attempt, by outcome kind',
    labelNames: ['outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const deliveriesTaken = new Counter({
    name: 'palaver_deliveries_taken_total',
    help: "Deliveries (webhooks and pushes) this node's worker took to send, by how: handoff (leased by the commit that wrote or promoted them) or claim",
    labelNames: ['how'] as const,
    registers: [registry],
  });
  const pushes = new Counter({
    name: 'palaver_push_attempts_total',
    help: 'Push attempts made by this node, by push kind (fcm, webhook, oauth-webhook) and outcome (sent, failed and to be retried, dead)',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
  });
  const emails = new Counter({
    name: 'palaver_email_attempts_total',
    help: 'Answers by email handled by this node, by outcome (sent, skipped: nothing to send, failed and to be retried, dead)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const emailReplies = new Counter({
    name: 'palaver_email_replies_total',
    help: "Customers' replies by email taken by this node, by outcome (written, dropped: automatic or empty, refused: not a valid reply address, limited)",
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const messageBatchSize = new Histogram({
    name: 'palaver_message_batch_size',
    help: 'Messages written per transaction (group commit), by writer: client or agent',
    labelNames: ['writer'],
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers: [registry],
  });
  const oneStatementBatches = new Counter({
    name: 'palaver_one_statement_batches_total',
    help: 'Message batches tried in one statement (embedded database), by writer and written: false when a sender had changed since its caller read it, and the batch went the locked way',
    labelNames: ['writer', 'written'],
    registers: [registry],
  });
  const redisFallbacks = new Counter({
    name: 'palaver_redis_fallbacks_total',
    help: "Rate-limit calls answered from this node's memory because Redis was unavailable, by limiter",
    labelNames: ['limiter'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'palaver_deliveries_pending',
    help: 'Deliveries waiting to be sent or retried (all nodes)',
    registers: [registry],
    async collect() {
      this.set(await pendingDeliveries());
    },
  });
  const clientWritesRefused = new Counter({
    name: 'palaver_client_writes_refused_total',
    help: 'Client API writes this node refused with 503 server_busy, by reason: too many in progress, the database connections all busy too long, or the CPU full with webhooks behind or answers waiting',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const databaseWait = { read: () => 0 };
  new Gauge({
    name: 'palaver_database_wait_seconds',
    help: "How long work waits for one of this node's database connections now (the admission's database sign)",
    registers: [registry],
    collect() {
      this.set(databaseWait.read() / 1000);
    },
  });
  const answersWait = { read: () => 0 };
  new Gauge({
    name: 'palaver_answers_wait_seconds',
    help: "How long the Services' answers wait to be written on this node now, mean over the last second (the admission's answers_waiting sign)",
    registers: [registry],
    collect() {
      this.set(answersWait.read() / 1000);
    },
  });
  // The share of time the node's one JavaScript thread runs callbacks is this counter's rate: near
  // 1, its CPU is what the node runs out of, which the admission's signs (writes in progress, the
  // database wait) do not show (docs/performance.md, Overload).
  totalCounter(
    registry,
    'palaver_event_loop_busy_seconds_total',
    "Time this node's event loop spent running callbacks (performance.eventLoopUtilization's active time)",
    () => performance.eventLoopUtilization().active / 1000,
  );
  // The embedded database serves one session, on a thread of its own: this counter's rate is the
  // share of time it executes statements. The session is full well before 1 (its other time goes
  // to waits on this thread between statements; about 0.5 at the embedded node's capacity on the
  // benchmark machine), and the database wait then rises: PostgreSQL is the way on
  // (docs/operations.md). Absent on PostgreSQL.
  if (embedded) {
    totalCounter(
      registry,
      'palaver_embedded_database_busy_seconds_total',
      "Time the embedded database's thread spent executing statements",
      embedded.busySeconds,
    );
    // That thread's own V8 heap: process.memoryUsage() and the default heap metrics read the
    // main thread's alone, while the process's RSS holds both (and PGlite's WebAssembly memory).
    new Gauge({
      name: 'palaver_embedded_database_heap_bytes',
      help: "The embedded database thread's V8 heap, by state: used (live and garbage not yet collected) or committed (held from the system)",
      labelNames: ['state'],
      registers: [registry],
      collect() {
        const { used, committed } = embedded.heapBytes();
        this.set({ state: 'used' }, used);
        this.set({ state: 'committed' }, committed);
      },
    });
  }
  const clientWritesInFlight = { read: () => 0 };
  new Gauge({
    name: 'palaver_client_writes_in_flight',
    help: 'Client API writes in progress on this node (admitted, not yet answered)',
    registers: [registry],
    collect() {
      this.set(clientWritesInFlight.read());
    },
  });
  return {
    registry,
    httpDuration,
    deliveries,
    deliveryAttemptSeconds,
    deliveriesTaken,
    pushes,
    emails,
    emailReplies,
    messageBatchSize,
    oneStatementBatches,
    redisFallbacks,
    clientWritesRefused,
    clientWritesInFlight,
    databaseWait,
    answersWait,
  };
}

/** A counter of a running total kept elsewhere (a clock of busy time): raised to it at each scrape. */
function totalCounter(registry: Registry, name: string, help: string, total: () => number): void {
  let counted = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = total();
      this.inc(now - counted);
      counted = now;
    },
  });
}
