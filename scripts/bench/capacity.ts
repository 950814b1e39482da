// `capacity`: how many widget conversations one node holds at human pace. Each conversation is a
// socket that sends a message every 5–15 s (at random); a Service in its own process answers
// every message through the Service API. Measured per step of N open conversations: the round
// trip from the user's `message` emit to the agent's answer arriving on that user's socket
// (p50, p99), errors (refused sends, answers that never came, conversations that could not be
// opened), and the server's CPU and RSS.
// The result is the largest N whose p99 stays under 250 ms with no error.
import { readFileSync } from 'node:fs';
import { io, type Socket } from 'socket.io-client';
import { percentile } from './load.ts';
import type { BenchPalaver } from './palaver.ts';
import { progress, type Metric } from './support.ts';

export interface CapacityOptions {
  /** Open conversations at each step, rising. */
  steps: number[];
  /** How long each step is measured, after its new conversations are open. */
  stepSeconds: number;
  /** The p99 a step must stay under to count. */
  p99LimitMs: number;
}

interface Conversation {
  socket: Socket;
  timer: ReturnType<typeof setTimeout> | undefined;
  seq: number;
}

interface StepResult {
  conversations: number;
  sent: number;
  answered: number;
  errors: number;
  p50_ms: number;
  p99_ms: number;
  server_cpu_percent: number;
  server_rss_mb: number;
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CLOCK_TICKS = 100;

/** The process's CPU seconds so far (user + system), from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match?.[1] ? Math.round(Number(match[1]) / 1024) : 0;
}

/**
 * Registers a device; false when it could not be done. A connection the server closed as idle
 * just as the client reused it fails with a reset (more likely while the machine is overloaded),
 * so a network failure is tried again before it counts as an error.
 */
async function register(url: string, identification: string): Promise<boolean> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const answer = await fetch(`${url}/devices`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-iris-identification': identification },
        body: '{}',
      });
      await answer.arrayBuffer();
      return answer.ok;
    } catch {
      // A reset or refused connection: once more, on a new connection.
    }
  }
  return false;
}

function connectOne(url: string, identification: string): Promise<Socket | null> {
  return new Promise((resolve) => {
    const socket = io(url, { path: '/socket.io', transports: ['websocket'], reconnection: false, auth: { identification } });
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', () => {
      socket.disconnect();
      resolve(null);
    });
  });
}

export async function benchCapacity(palaver: BenchPalaver, options: CapacityOptions): Promise<Metric> {
  const pid = palaver.child.pid;
  if (!pid) throw new Error('palaver has no pid');
  const conversations: Conversation[] = [];
  /** Sends in flight: text → emit time. */
  const pending = new Map<string, bigint>();
  let latencies: number[] = [];
  let errors = 0;
  /** Conversations of the current step that could not be opened (device or socket refused). */
  let unopened = 0;
  let sent = 0;
  let measuring = false;

  const schedule = (c: Conversation, index: number) => {
    c.timer = setTimeout(
      () => {
        c.seq += 1;
        const text = `c${index}.${c.seq}`;
        if (measuring) {
          pending.set(text, process.hrtime.bigint());
          sent += 1;
        }
        c.socket.emit('message', { message: text }, (answer: { status?: string }) => {
          if (answer.status !== 'SUCCESS' && measuring) errors += 1;
        });
        schedule(c, index);
      },
      5000 + Math.random() * 10_000,
    );
  };

  const open = async (count: number) => {
    const label = `cap${conversations.length}`;
    for (let offset = 0; offset < count; offset += 100) {
      const batch = Array.from(
        { length: Math.min(100, count - offset) },
        (_, i) => `${palaver.account.identification}:bench-${label}-${(offset + i).toString().padStart(6, '0')}`,
      );
      const registered = await Promise.all(batch.map((identification) => register(palaver.url, identification)));
      const sockets = await Promise.all(
        batch.map((identification, i) => (registered[i] ? connectOne(palaver.url, identification) : Promise.resolve(null))),
      );
      for (const socket of sockets) {
        if (!socket) {
          unopened += 1;
          continue;
        }
        const conversation: Conversation = { socket, timer: undefined, seq: 0 };
        const index = conversations.push(conversation) - 1;
        socket.on('message', (message: { typeId?: number; message?: string | null }) => {
          if (message.typeId !== 2 || !message.message?.startsWith('re: ')) return;
          const t0 = pending.get(message.message.slice(4));
          if (t0 === undefined) return;
          pending.delete(message.message.slice(4));
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        });
        schedule(conversation, index);
      }
    }
  };

  const steps: StepResult[] = [];
  try {
    for (const target of options.steps) {
      progress(`capacity: opening conversations up to ${target}`);
      unopened = 0;
      await open(target - conversations.length);
      // Let the new conversations reach their pace before measuring.
      await tick(5000);
      latencies = [];
      errors = 0;
      sent = 0;
      pending.clear();
      const cpu0 = cpuSeconds(pid);
      const t0 = Date.now();
      measuring = true;
      await tick(options.stepSeconds * 1000);
      measuring = false;
      const cpu = (cpuSeconds(pid) - cpu0) / ((Date.now() - t0) / 1000);
      // Answers to the last sends of the window may still be on their way.
      for (let i = 0; i < 100 && pending.size > 0; i++) await tick(100);
      const unanswered = pending.size;
      const sorted = [...latencies].sort((a, b) => a - b);
      const step: StepResult = {
        conversations: conversations.length,
        sent,
        answered: sorted.length,
        errors: errors + unanswered + unopened,
        p50_ms: Math.round(percentile(sorted, 50) * 10) / 10,
        p99_ms: Math.round(percentile(sorted, 99) * 10) / 10,
        server_cpu_percent: Math.round(cpu * 100),
        server_rss_mb: rssMb(pid),
      };
      steps.push(step);
      progress(
        `  ${step.conversations} conversations: ${step.sent} sent, ${step.answered} answered, ${step.errors} errors, ` +
          `p50 ${step.p50_ms} ms, p99 ${step.p99_ms} ms, server CPU ${step.server_cpu_percent}%, RSS ${step.server_rss_mb} MB`,
      );
      // Past the limit by far: larger steps would only measure a queue.
      if (step.errors > step.sent * 0.05 || step.p99_ms > options.p99LimitMs * 8) break;
    }
  } finally {
    for (const c of conversations) {
      clearTimeout(c.timer);
      c.socket.disconnect();
    }
  }
  const held = steps.filter((s) => s.errors === 0 && s.sent > 0 && s.p99_ms < options.p99LimitMs);
  const best = held.at(-1);
  return {
    value: best?.conversations ?? 0,
    unit: `conversations (p99 < ${options.p99LimitMs} ms, no error)`,
    steps,
  };
}
