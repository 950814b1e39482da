// Where a capacity round trip's time goes. Each measured message has four instants on the
// clock every process of the machine shares (performance.timeOrigin + performance.now()): its
// emit and its acknowledgement (the load generator), its webhook's arrival at the Service and
// the server's answer to the Service's API call (capacity-service.ts), and its answer's arrival
// on the customer's socket (the load generator). The stages between them:
//   ack      emit → acknowledged: the socket message read, group-committed, acknowledged
//   webhook  emit → webhook at the Service: the commit, then the delivery handed over or claimed,
//            waiting for a slot (webhooks.maxPerService), signed and POSTed
//   api      webhook at the Service → its API call answered: the Service's own turn, the
//            request, the answer's group commit
//   push     webhook at the Service → answer on the socket: `api` with the fan-out to the socket
// Each stage's p50 and p99 over the step, and the mean of each over the slowest 1% of round
// trips (the tail: which stage makes the p99).
// And Palaver's own counters over the step from /metrics: how deliveries were taken (hand-off or
// claim), attempts by outcome, their mean duration and how many were in flight on average, message batch sizes,
// the Services' answers at the node (mean time and in progress), the event loop's delay.
import { percentile } from './load.ts';
import { metricsText } from './palaver.ts';

type Stage = 'ack' | 'webhook' | 'api' | 'push';
export type Stages = Record<Stage, { p50: number; p99: number; tail_mean: number }> & { traced: number };

const round = (ms: number) => Math.round(ms * 10) / 10;

export function stagesOf(timeline: Map<string, [number, number, number]>, service: Record<string, [number, number]>): Stages | undefined {
  const rows: Array<Record<Stage | 'total', number>> = [];
  for (const [text, [emit, ack, answer]] of timeline) {
    const hook = service[text];
    if (!hook || Number.isNaN(ack) || Number.isNaN(answer)) continue;
    rows.push({ ack: ack - emit, webhook: hook[0] - emit, api: hook[1] - hook[0], push: answer - hook[0], total: answer - emit });
  }
  if (rows.length === 0) return undefined;
  const tail = [...rows].sort((a, b) => b.total - a.total).slice(0, Math.max(1, Math.ceil(rows.length / 100)));
  const stage = (name: Stage) => {
    const sorted = rows.map((r) => r[name]).sort((a, b) => a - b);
    return {
      p50: round(percentile(sorted, 50)),
      p99: round(percentile(sorted, 99)),
      tail_mean: round(tail.reduce((sum, r) => sum + r[name], 0) / tail.length),
    };
  };
  return { traced: rows.length, ack: stage('ack'), webhook: stage('webhook'), api: stage('api'), push: stage('push') };
}

/** Every sample of Palaver's /metrics, by name with its labels (`name{labels}`). */
async function samples(url: string): Promise<Map<string, number>> {
  const text = await metricsText(url);
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^(palaver_[a-z_0-9]+(?:\{[^}]*\})?) ([0-9.e+-]+|NaN)$/.exec(line);
    if (match?.[1] && match[2]) out.set(match[1], Number(match[2]));
  }
  return out;
}

export interface ServerCounters {
  /** Deliveries taken to send, by how. */
  taken: Record<string, number>;
  /** Webhook attempts by outcome. */
  attempts: Record<string, number>;
  attempt_mean_ms: number;
  /**
   * Attempts in flight on average (their time over the step's): near `webhooks.maxPerService`,
   * the one Service's webhooks are held by that limit, and queue in the outbox.
   */
  attempts_in_flight: number;
  /** Messages per group-committed transaction, by writer. */
  batch_mean: Record<string, number>;
  /** Client writes refused with server_busy, by the admission's sign (http/admission.ts). */
  refused: Record<string, number>;
  /**
   * The Services' answers (POST /serviceApi/…/users/:userId/messages) at the node: their mean
   * time from request to response, and how many were in progress on average. Growing while
   * the webhooks keep pace, the node's CPU is writing answers behind new customers' messages
   * (the admission's answers_waiting sign).
   */
  answers: { mean_ms: number; in_flight: number };
  /** The event loop's delay as the step ends (prom-client samples it between scrapes: this step's). */
  loop_delay_ms: { p99: number; max: number };
  /** The share of the step the event loop spent running callbacks (1: the node's thread never idle). */
  loop_busy: number;
  /** On the embedded database: the share of the step its thread spent executing statements. */
  database_busy?: number;
  /** On the embedded database: its thread's V8 heap as the step ends, MB committed (held from the system) and used. */
  database_heap_mb?: { committed: number; used: number };
}

export interface CounterSnapshot {
  values: Map<string, number>;
}

export async function serverCounters(url: string): Promise<CounterSnapshot> {
  return { values: await samples(url) };
}

export function counterDelta(before: CounterSnapshot, after: CounterSnapshot, seconds: number): ServerCounters {
  const delta = (key: string) => (after.values.get(key) ?? 0) - (before.values.get(key) ?? 0);
  const byLabel = (name: string, label: string) => {
    const out: Record<string, number> = {};
    for (const key of after.values.keys()) {
      const match = new RegExp(`^${name}\\{.*${label}="([^"]+)"`).exec(key);
      if (match?.[1] && !key.includes('_bucket')) out[match[1]] = (out[match[1]] ?? 0) + delta(key);
    }
    return out;
  };
  const sum = (name: string) => Object.values(byLabel(`${name}_sum`, '[a-z]+')).reduce((a, b) => a + b, 0);
  const count = (name: string) => Object.values(byLabel(`${name}_count`, '[a-z]+')).reduce((a, b) => a + b, 0);
  const batchSums = byLabel('palaver_message_batch_size_sum', 'writer');
  const batchCounts = byLabel('palaver_message_batch_size_count', 'writer');
  const attempts = count('palaver_delivery_attempt_duration_seconds');
  // Every status of the Service API's message route, by its pattern (the access log's route label).
  const answerRoute = (part: 'sum' | 'count') =>
    [...after.values.keys()]
      .filter((key) => key.startsWith(`palaver_http_request_duration_seconds_${part}{`) && key.includes('method="POST"'))
      .filter((key) => /route="\/serviceApi\/[^"]*\/users\/:userId\/messages"/.test(key))
      .reduce((total, key) => total + delta(key), 0);
  const answerCount = answerRoute('count');
  return {
    taken: byLabel('palaver_deliveries_taken_total', 'how'),
    attempts: byLabel('palaver_delivery_attempts_total', 'outcome'),
    attempt_mean_ms: attempts > 0 ? round((sum('palaver_delivery_attempt_duration_seconds') / attempts) * 1000) : 0,
    attempts_in_flight: round(sum('palaver_delivery_attempt_duration_seconds') / seconds),
    batch_mean: Object.fromEntries(Object.entries(batchSums).map(([w, s]) => [w, round(s / (batchCounts[w] || 1))])),
    refused: byLabel('palaver_client_writes_refused_total', 'reason'),
    answers: {
      mean_ms: answerCount > 0 ? round((answerRoute('sum') / answerCount) * 1000) : 0,
      in_flight: round(answerRoute('sum') / seconds),
    },
    loop_delay_ms: {
      p99: round((after.values.get('palaver_nodejs_eventloop_lag_p99_seconds') ?? 0) * 1000),
      max: round((after.values.get('palaver_nodejs_eventloop_lag_max_seconds') ?? 0) * 1000),
    },
    loop_busy: Math.round((delta('palaver_event_loop_busy_seconds_total') / seconds) * 100) / 100,
    ...(after.values.has('palaver_embedded_database_busy_seconds_total')
      ? { database_busy: Math.round((delta('palaver_embedded_database_busy_seconds_total') / seconds) * 100) / 100 }
      : {}),
    ...(after.values.has('palaver_embedded_database_heap_bytes{state="committed"}')
      ? {
          database_heap_mb: {
            committed: Math.round((after.values.get('palaver_embedded_database_heap_bytes{state="committed"}') ?? 0) / 2 ** 20),
            used: Math.round((after.values.get('palaver_embedded_database_heap_bytes{state="used"}') ?? 0) / 2 ** 20),
          },
        }
      : {}),
  };
}
