// Many socket.io-client connections for the benchmarks, opened in waves.
import { io, type Socket } from 'socket.io-client';

/** Opens up to `count` sockets; the ones that fail to connect are left out (the caller counts). */
export async function openSockets(url: string, count: number, auth: Record<string, unknown>, wave = 200): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let offset = 0; offset < count; offset += wave) {
    const batch = await Promise.all(
      Array.from(
        { length: Math.min(wave, count - offset) },
        () =>
          new Promise<Socket | null>((resolve) => {
            const socket = io(url, { path: '/socket.io', transports: ['websocket'], reconnection: false, auth });
            socket.once('connect', () => resolve(socket));
            socket.once('connect_error', () => {
              socket.disconnect();
              resolve(null);
            });
          }),
      ),
    );
    for (const socket of batch) if (socket) sockets.push(socket);
  }
  return sockets;
}

export function closeSockets(sockets: Socket[]): void {
  for (const socket of sockets) socket.disconnect();
}
