// Memory of a process started with --inspect, read over the inspector protocol right after a
// full garbage collection: the live heap, without the garbage of the moment (which made
// readings of the same run differ by a factor of two), and without code in the process.
import WebSocket from 'ws';

export interface Memory {
  heap: number;
  rss: number;
}

async function debuggerUrl(port: number): Promise<string> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on port ${port}`);
  return url;
}

export async function memoryAfterGc(port: number): Promise<Memory> {
  const socket = new WebSocket(await debuggerUrl(port));
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  let next = 0;
  const call = (method: string, params: object = {}) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = ++next;
      const onMessage = (data: Buffer) => {
        const reply = JSON.parse(data.toString('utf8')) as { id?: number; result?: Record<string, unknown>; error?: unknown };
        if (reply.id !== id) return;
        socket.off('message', onMessage);
        if (reply.error) reject(new Error(JSON.stringify(reply.error)));
        else resolve(reply.result ?? {});
      };
      socket.on('message', onMessage);
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    // Twice: the first collection's finalisers can free more for the second.
    await call('HeapProfiler.collectGarbage');
    await call('HeapProfiler.collectGarbage');
    const { result } = (await call('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    })) as { result: { value: string } };
    const usage = JSON.parse(result.value) as { heapUsed: number; rss: number };
    return { heap: usage.heapUsed, rss: usage.rss };
  } finally {
    socket.close();
  }
}
