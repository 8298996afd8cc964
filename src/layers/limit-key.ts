/**
 * The key a rate limit or a quota counts a request under (`rateLimit.key`, `quotas.key`),
 * compiled once per policy at config load.
 *
 * Design note. A key is read from the request (a header), or from what authentication learnt (the
 * consumer, a claim). A request without it (no consumer, the claim or header absent) is counted by
 * its client address, as with `key: ip`: it is never let through unlimited, and keyless requests
 * from different clients never share one bucket. Values are tagged with their kind (`consumer:`,
 * `claim:`, `header:`), which no client address starts with, so a header value cannot land in an
 * address's bucket. A value longer than MAX_RAW_CHARS is replaced by its SHA-256, so a client
 * cannot make the gateway (or Redis) hold huge keys; the number of keys held stays bounded by the
 * stores themselves (rate-limit.ts, quota.ts).
 */
import { createHash } from 'node:crypto';
import type { Exchange } from '../pipeline/types.js';
import type { LimitKey } from '../config/syntax/limit-key.js';
import type { ClientIpResolver } from '../server/client-ip.js';
import { claimAt } from '../pipeline/claims.js';

/** Reads the key a request is counted under. */
export type RequestKey = (ex: Exchange) => string;

/** Values up to this length are kept as they are (readable in Redis and on the status page). */
const MAX_RAW_CHARS = 64;

/** `value`, or `#` and its SHA-256 (base64url) when it is longer than MAX_RAW_CHARS. */
export function boundedKey(value: string): string {
  return value.length <= MAX_RAW_CHARS ? value : '#' + createHash('sha256').update(value).digest('base64url');
}

/** The function that reads `key` from a request; `clientIp` for `ip` and for requests without the key. */
export function compileRequestKey(key: LimitKey, clientIp: ClientIpResolver): RequestKey {
  switch (key.kind) {
    case 'ip':
      return (ex) => clientIp(ex.req);
    case 'consumer':
      return (ex) => (ex.consumer === undefined ? clientIp(ex.req) : 'consumer:' + boundedKey(ex.consumer.id));
    case 'claim': {
      const name = key.name;
      return (ex) => {
        const value = ex.claims === undefined ? undefined : claimAt(ex.claims, name);
        // Strings and numbers identify; an object, a list or a boolean would put many callers in one bucket.
        if (typeof value === 'string' && value !== '') return 'claim:' + boundedKey(value);
        if (typeof value === 'number' && Number.isFinite(value)) return 'claim:' + String(value);
        return clientIp(ex.req);
      };
    }
    case 'header': {
      const name = key.name;
      return (ex) => {
        const value = ex.req.headers[name];
        // A header sent twice arrives joined with ", " (set-cookie aside, which is no key).
        const text = Array.isArray(value) ? value.join(', ') : value;
        return text === undefined || text === '' ? clientIp(ex.req) : 'header:' + boundedKey(text);
      };
    }
  }
}
