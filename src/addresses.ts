// Who is calling, by network address. X-Forwarded-For is written by whoever sends the request,
// so it is believed only as far as trusted proxies (config trustedProxies) vouch for it: the
// header is read from the right, each hop a trusted proxy added is skipped, and the first
// address no trusted proxy stands for is the client. With no trusted proxies the header is
// ignored and the client is the peer of the TCP connection.
import { BlockList, isIP } from 'node:net';

/** An address or a CIDR block (10.0.0.0/8, ::1, fd00::/8), as config validates it. */
export function isAddressOrCidr(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d+$/.test(prefix) && bits <= (version === 4 ? 32 : 128);
}

/** IPv4 peers often show as ::ffff:a.b.c.d on dual-stack sockets; compared and keyed as a.b.c.d. */
export function normalize(address: string): string {
  const trimmed = address.trim().replace(/^\[(.*)\]$/, '$1');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(trimmed);
  return mapped?.[1] ?? trimmed;
}

export class TrustedProxies {
  private readonly list = new BlockList();
  private readonly empty: boolean;

  constructor(entries: readonly string[]) {
    this.empty = entries.length === 0;
    for (const entry of entries) {
      const [address = '', prefix] = entry.split('/');
      const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.list.addAddress(normalize(address), type);
      else this.list.addSubnet(normalize(address), Number(prefix), type);
    }
  }

  trusts(address: string): boolean {
    const version = isIP(address);
    return version !== 0 && this.list.check(address, version === 6 ? 'ipv6' : 'ipv4');
  }

  /**
   * The client's address: the peer, or, while the peer is a trusted proxy, the hop it saw
   * (X-Forwarded-For from the right). A malformed hop stops the walk at the proxy that passed it.
   */
  clientAddress(peer: string | undefined, forwardedFor: string | string[] | undefined): string {
    let address = normalize(peer ?? '');
    if (this.empty || !forwardedFor) return address;
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',').map(normalize).filter(Boolean);
    while (this.trusts(address)) {
      const next = hops.pop();
      if (next === undefined || isIP(next) === 0) break;
      address = next;
    }
    return address;
  }
}
