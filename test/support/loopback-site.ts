// A site on loopback for browser tests: a real HTTP server at http://localhost:<port>, which the
// browser counts as another origin than Palaver's http://127.0.0.1:<port> (and the same private
// address space, so no private-network checks get in the way).
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackSite {
  /** The page's address, e.g. http://localhost:41234/. */
  url: string;
  /** Its origin as the browser sends it: http://localhost:41234. */
  origin: string;
  close(): Promise<void>;
}

export async function startLoopbackSite(handler: RequestListener): Promise<LoopbackSite> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://localhost:${port}`;
  return {
    url: `${origin}/`,
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
