/**
 * What a rate limit or a quota counts requests by (`rateLimit.key`, `quotas.key`): the client
 * address, the authenticated consumer, a claim of the token, or a request header.
 * layers/limit-key.ts turns a parsed key into the function that reads it from a request.
 */
import { HEADER_NAME } from './headers.js';

/** A limit key, parsed. Header names are lower case, as Node gives them. */
export type LimitKey =
  | { readonly kind: 'ip' }
  | { readonly kind: 'consumer' }
  | { readonly kind: 'claim'; readonly name: string }
  | { readonly kind: 'header'; readonly name: string };

/** The syntax accepted by the schema: `ip`, `consumer`, `claims.NAME` or `header:NAME`. */
export const LIMIT_KEY_PATTERN = /^(?:ip|consumer|claims\.[^\s{}]+|header:[!#$%&'*+\-.^_`|~0-9A-Za-z]+)$/;

/** The message the schema reports for a key that does not match LIMIT_KEY_PATTERN. */
export const LIMIT_KEY_MESSAGE = 'must be ip, consumer, claims.NAME or header:NAME';

/** Parses a key the schema accepted. */
export function parseLimitKey(text: string): LimitKey {
  if (text === 'ip' || text === 'consumer') return { kind: text };
  if (text.startsWith('claims.')) return { kind: 'claim', name: text.slice('claims.'.length) };
  const name = text.slice('header:'.length);
  if (!text.startsWith('header:') || !HEADER_NAME.test(name)) throw new Error(`not a limit key: ${text}`);
  return { kind: 'header', name: name.toLowerCase() };
}

/** True for a key read from what authentication learnt (the consumer, a claim): counted after auth. */
export function needsIdentity(key: LimitKey): boolean {
  return key.kind === 'consumer' || key.kind === 'claim';
}
