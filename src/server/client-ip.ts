/**
 * The client's address, for rate limiting and logs (docs/design-decisions.md `config.trustProxy`).
 *
 * The socket's peer is the client unless it is a trusted proxy. Then `X-Forwarded-For` is read
 * from the right: every proxy appends the address it saw, so the rightmost entries were written
 * by our own proxies and everything left of the first untrusted address was written by the
 * client and may be forged. The answer is the first untrusted address from the right (or the
 * leftmost when every hop is trusted). A malformed entry stops the walk at the last valid hop.
 */
import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { TRUST_PROXY_NAMES } from '../config/syntax/trust-proxy.js';

export type ClientIpResolver = (req: IncomingMessage) => string;

/** Compiles `trustProxy` (validated entries) into a membership test. */
export function createTrustTest(entries: readonly string[]): (address: string) => boolean {
  if (entries.length === 0) return () => false;
  const list = new BlockList();
  for (const entry of entries.flatMap((e) => TRUST_PROXY_NAMES[e] ?? [e])) {
    const slash = entry.indexOf('/');
    const address = slash < 0 ? entry : entry.slice(0, slash);
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (slash < 0) list.addAddress(address, type);
    else list.addSubnet(address, Number(entry.slice(slash + 1)), type);
  }
  return (address) => {
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/** `::ffff:1.2.3.4` (an IPv4 client on a dual-stack socket) is `1.2.3.4`. */
export function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/** One `X-Forwarded-For` entry as an address: trims, drops `[...]` brackets and an IPv4 `:port`. */
export function parseForwardedEntry(entry: string): string | undefined {
  let a = entry.trim();
  if (a.startsWith('[')) {
    const end = a.indexOf(']');
    if (end < 0) return undefined;
    a = a.slice(1, end);
  } else if (a.indexOf(':') > 0 && a.indexOf(':') === a.lastIndexOf(':')) {
    a = a.slice(0, a.indexOf(':')); // 1.2.3.4:5678
  }
  return isIP(a) === 0 ? undefined : normalizeAddress(a);
}

/**
 * The resolver for a configuration: with no trusted proxy, the socket address and nothing else
 * (a client cannot pick its own rate-limit bucket by sending `X-Forwarded-For`).
 */
export function createClientIpResolver(trustProxy: readonly string[]): ClientIpResolver {
  const socketAddress = (req: IncomingMessage) => normalizeAddress(req.socket.remoteAddress ?? '');
  if (trustProxy.length === 0) return socketAddress;
  const trusted = createTrustTest(trustProxy);
  return (req) => {
    let client = socketAddress(req);
    if (!trusted(client)) return client;
    const header = req.headers['x-forwarded-for'];
    if (header === undefined) return client;
    const hops = (Array.isArray(header) ? header.join(',') : header).split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseForwardedEntry(hops[i]!);
      if (hop === undefined) return client;
      client = hop;
      if (!trusted(hop)) return hop;
    }
    return client;
  };
}
