/**
 * The entries of `config.trustProxy`: an IP address, a CIDR, or the name of an address set.
 * server/client-ip.ts turns the checked entries into a membership test.
 */
import { cidrProblem } from './cidr.js';

/** Named address sets accepted in `trustProxy` besides addresses and CIDRs. */
export const TRUST_PROXY_NAMES: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
};

/** Why a `trustProxy` entry is unusable, or undefined when it is an address, a CIDR or a name. */
export function trustEntryProblem(entry: string): string | undefined {
  if (entry in TRUST_PROXY_NAMES) return undefined;
  const problem = cidrProblem(entry);
  if (problem === undefined || entry.includes('/')) return problem;
  return `"${entry}" is not an IP address, a CIDR (10.0.0.0/8, fd00::/8) or one of ${Object.keys(TRUST_PROXY_NAMES).join(', ')}`;
}
