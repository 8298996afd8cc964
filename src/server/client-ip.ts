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
  return createAddressTest(entries.flatMap((e) => TRUST_PROXY_NAMES[e] ?? [e]));
}

/**
 * Compiles addresses and CIDRs (validated by config/syntax/cidr.ts) into a membership test of an
 * address. Each family has its own list: an IPv6 range (even `::/0`) never takes in an IPv4
 * client, and an IPv4-mapped address (`::ffff:1.2.3.4`) is tested as the IPv4 address it is.
 */
export function createAddressTest(entries: readonly string[]): (address: string) => boolean {
  if (entries.length === 0) return () => false;
  const v4 = new BlockList();
  const v6 = new BlockList();
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    const written = slash < 0 ? entry : entry.slice(0, slash);
    // A range written as IPv4-mapped (::ffff:10.0.0.0/104) is the IPv4 range it maps.
    const address = normalizeAddress(written);
    const mapped = address !== written;
    const [list, type] = isIP(address) === 6 ? [v6, 'ipv6' as const] : [v4, 'ipv4' as const];
    if (slash < 0) list.addAddress(address, type);
    else list.addSubnet(address, Math.max(0, Number(entry.slice(slash + 1)) - (mapped ? 96 : 0)), type);
  }
  return (address) => {
    const plain = normalizeAddress(address);
    const family = isIP(plain);
    return family === 4 ? v4.check(plain, 'ipv4') : family === 6 && v6.check(plain, 'ipv6');
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

/**
 * The key a client is counted under: its address, or for an IPv6 address the network of
 * `prefixLength` bits it belongs to (`2001:db8:0:1::/64`), so that one subscriber's /64 is one
 * client. IPv4 addresses, and every address when `prefixLength` is 128, are their own key.
 */
export function clientKey(address: string, prefixLength: number): string {
  // After normalizeAddress only IPv6 has a colon: no parse of the address on the common path.
  if (prefixLength >= 128 || !address.includes(':') || isIP(address) !== 6) return address;
  const groups = ipv6Groups(address);
  const full = prefixLength >> 4;
  const rest = prefixLength & 15;
  let key = '';
  for (let i = 0; i < full; i++) key += `${groups[i]!.toString(16)}:`;
  if (rest > 0) key += `${(groups[full]! & (0xffff << (16 - rest)) & 0xffff).toString(16)}:`;
  return `${key}:/${prefixLength}`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing IPv4 part split in two). */
function ipv6Groups(address: string): number[] {
  const zone = address.indexOf('%');
  let text = (zone < 0 ? address : address.slice(0, zone)).toLowerCase();
  const v4 = text.lastIndexOf(':');
  if (text.includes('.', v4)) {
    const [a, b, c, d] = text
      .slice(v4 + 1)
      .split('.')
      .map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4 + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const gap = text.indexOf('::');
  const head = (gap < 0 ? text : text.slice(0, gap)).split(':').filter((g) => g !== '');
  const tail =
    gap < 0
      ? []
      : text
          .slice(gap + 2)
          .split(':')
          .filter((g) => g !== '');
  const zeros = new Array<string>(8 - head.length - tail.length).fill('0');
  return [...head, ...zeros, ...tail].map((g) => parseInt(g, 16));
}
