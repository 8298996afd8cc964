/**
 * Address ranges as written in the configuration (`trustProxy`, `ipRules`): an IPv4 or IPv6
 * address, alone (one address: /32 or /128) or with a prefix length (`10.0.0.0/8`, `fd00::/8`).
 * server/client-ip.ts turns checked entries into a membership test.
 */
import { isIP } from 'node:net';

/** Why `entry` is not an address or a CIDR, or undefined when it is one. */
export function cidrProblem(entry: string): string | undefined {
  const slash = entry.indexOf('/');
  const address = slash < 0 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return `"${entry}" is not an IP address or a CIDR (10.0.0.0/8, 2001:db8::/32)`;
  if (slash < 0) return undefined;
  const bits = entry.slice(slash + 1);
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return `"${entry}": prefix length must be 0-${max}`;
  return undefined;
}
