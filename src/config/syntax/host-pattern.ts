/**
 * The `hosts:` entries of a route (docs/routing.md "Host routing"): an exact name, an IP address
 * (`[::1]` for IPv6), or `*.domain`, a wildcard for exactly one label, as TLS certificates and
 * SNI read it. Names compare case-insensitively and a final dot is the same name without it.
 */
import { isIPv4, isIPv6 } from 'node:net';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Why `entry` is not a host pattern, or undefined when it is one. */
export function hostPatternProblem(entry: string): string | undefined {
  if (entry === '') return 'is empty';
  if (/\s/.test(entry)) return 'holds a space';
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)) return 'is a URL; write the host name alone';
  if (entry.startsWith('[')) {
    return entry.endsWith(']') && isIPv6(entry.slice(1, -1))
      ? undefined
      : 'is not an IPv6 address in brackets ([::1]); a port is not part of a host';
  }
  if (isIPv6(entry)) return 'is an IPv6 address: write it in brackets ([::1])';
  if (entry.includes(':')) return 'holds a port; hosts match whatever port the client used';
  if (entry.includes('/')) return 'holds a path; write the host name alone';
  const name = normalHostPattern(entry);
  if (isIPv4(name)) return undefined;
  const wildcard = entry.startsWith('*.');
  const rest = wildcard ? normalHostPattern(entry.slice(2)) : name;
  if (wildcard && rest === '') return 'names no domain after "*."';
  if (rest.includes('*'))
    return wildcard || name.startsWith('*')
      ? 'may hold one "*", as a whole first label (*.example.com)'
      : 'may hold "*" only as a whole first label (*.example.com)';
  if (rest.length > 253 || !rest.split('.').every((label) => LABEL.test(label)))
    return 'is not a host name (letters, digits and "-" in dot-separated labels)';
  return undefined;
}

/** The form a pattern is compared in: lower case, without a final dot. */
export function normalHostPattern(entry: string): string {
  const lower = entry.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}
