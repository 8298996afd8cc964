/**
 * The API key store (docs/consumers.md "API keys"): the consumers' keys, kept only as SHA-256
 * digests. A presented key is hashed and its digest looked up; the stored digest is then compared
 * with `timingSafeEqual`. Neither step depends on how much of a real key the presented one
 * matches: the lookup runs on the digest, and a digest that shares a prefix with a stored one
 * tells nothing about the key (finding a key for a chosen digest is a preimage attack). The key
 * itself is never stored, compared or logged.
 *
 * One store per configuration; `replace` swaps its whole index at once when the consumers file
 * changes (setup/consumers-file.ts), so a request sees the old keys or the new, never a mix.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ConsumerSpec } from '../config/types.js';
import type { Consumer } from '../pipeline/types.js';
import { claimHeaders } from './claim-headers.js';

/** What a valid key stands for, made once per consumer when the store is filled. */
export interface KeyHolder {
  readonly consumer: Consumer;
  readonly claims: Readonly<Record<string, unknown>>;
  /** The consumer's string claims as `X-<claim>` headers (auth/claim-headers.ts). */
  readonly claimHeaders: [string, string][];
}

interface Entry {
  readonly digest: Buffer;
  readonly holder: KeyHolder;
}

export interface KeyStore {
  /** The holder of `key`, or undefined when no consumer has it. */
  find(key: string): KeyHolder | undefined;
  /** Serves these consumers from now on, in place of the previous ones. */
  replace(consumers: readonly ConsumerSpec[]): void;
  /** How many keys the store holds. */
  readonly size: number;
}

/**
 * A store of the consumers' keys.
 * @example createKeyStore(config.consumers).find(req.headers['x-api-key'])?.consumer.id
 */
export function createKeyStore(consumers: readonly ConsumerSpec[], clientSubjectHeader?: string): KeyStore {
  let index = indexOf(consumers, clientSubjectHeader);
  return {
    find(key) {
      const digest = createHash('sha256').update(key).digest();
      const entry = index.get(digest.toString('hex'));
      // The map found the entry by the digest's text; the bytes are confirmed in constant time.
      return entry !== undefined && timingSafeEqual(entry.digest, digest) ? entry.holder : undefined;
    },
    replace(next) {
      index = indexOf(next, clientSubjectHeader);
    },
    get size() {
      return index.size;
    },
  };
}

function indexOf(consumers: readonly ConsumerSpec[], clientSubjectHeader: string | undefined): Map<string, Entry> {
  const index = new Map<string, Entry>();
  for (const c of consumers) {
    // Claim headers are made on a consumer's first request: a store of 100,000 consumers is
    // built (and rebuilt on every change of its file) faster without them.
    let headers: [string, string][] | undefined;
    const holder: KeyHolder = {
      consumer: Object.freeze({ id: c.id, plan: c.plan }),
      claims: c.claims,
      get claimHeaders() {
        return (headers ??= claimHeaders(c.claims, undefined, clientSubjectHeader));
      },
    };
    for (const hex of c.keyHashes) index.set(hex, { digest: Buffer.from(hex, 'hex'), holder });
  }
  return index;
}
