// Open HTTP connections per client address, capped: a client that opens many connections and
// sends slowly (headers a byte at a time) would otherwise hold sockets and memory until the
// request timeouts end them. Counted at the TCP level, so a trusted proxy's connections (which
// carry many clients) are not counted; behind one, the proxy does this job.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { normalize, type TrustedProxies } from '../addresses.ts';
import type { Logger } from '../logger.ts';

export function capConnectionsPerAddress(http: Server, options: { max: number; trustedProxies: TrustedProxies; logger: Logger }): void {
  const open = new Map<string, number>();
  // One listener for every connection, with the socket as `this` (Node keeps its peer address
  // after it closes): a closure per connection would cost every idle socket a few hundred bytes.
  function release(this: Socket): void {
    const address = normalize(this.remoteAddress ?? '');
    const left = (open.get(address) ?? 1) - 1;
    if (left > 0) open.set(address, left);
    else open.delete(address);
  }
  http.on('connection', (socket: Socket) => {
    const address = normalize(socket.remoteAddress ?? '');
    if (!address || options.trustedProxies.trusts(address)) return;
    const count = (open.get(address) ?? 0) + 1;
    if (count > options.max) {
      options.logger.info({ address, open: count - 1 }, 'connection refused: too many open connections from one address');
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.on('close', release);
  });
}
