/**
 * Records a cached route's answer as it leaves the gateway (layers/cache.ts): set beneath the
 * response's compression (response/compression/compress-response.ts `interceptBeneath`), so the
 * head and bytes it sees are the ones the client gets. The body is kept as it is written, up to
 * `maxBytes`, and handed over once the client has all of it: never read twice, never stored when
 * the client left first. An answer with an error status inside a stale entry's stale-if-error
 * window is replaced by that entry (RFC 5861 4); a 304 to the cache's own conditional request is
 * replaced by the stored answer it revalidated (RFC 9111 4.3.4).
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { RawWriter } from '../response/compression/compress-response.js';
import type { StoredAnswer } from './hit.js';

/** A complete answer as recorded. */
export interface RecordedAnswer {
  readonly status: number;
  /** The head as it is to be stored (per-request and connection fields left out). */
  readonly headers: Record<string, string | string[]>;
  /** The head as it was sent, every field: what storability is judged on. */
  readonly sent: OutgoingHttpHeaders;
  readonly body: Buffer;
}

export interface RecorderOptions {
  readonly maxBytes: number;
  /** `Cache-Status` of the answer when it is not replaced. */
  readonly cacheStatus: string;
  /** The stale answer that may stand in for an error with this status now; undefined: none. */
  readonly stale: ((status: number) => StoredAnswer | undefined) | undefined;
  /**
   * Set when the request revalidates a stored answer: what a 304 (its head as it would be stored,
   * and as given) becomes, the stored answer refreshed; undefined when the 304 is not for it.
   */
  readonly notModified:
    ((head: Record<string, string | string[]>, given: OutgoingHttpHeaders) => StoredAnswer | undefined) | undefined;
  /** False for a background refresh: an error answer is never stored, the stale entry stays. */
  readonly storesErrors: boolean;
  /** Told when an error was replaced by the stale entry. */
  onStaleServed(): void;
  onComplete(answer: RecordedAnswer): void;
}

/** Statuses answered with a stale entry inside its stale-if-error window (RFC 5861 4). */
const ERROR_STATUSES = new Set([500, 502, 503, 504]);

/** Head fields never stored: per request, per connection, or recomputed on every hit. */
const NOT_STORED = new Set([
  'x-request-id',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'age',
  'cache-status',
  'x-portico-error',
  'set-cookie',
]);

export function createRecorder(raw: RawWriter, res: ServerResponse, options: RecorderOptions): RawWriter {
  let chunks: Buffer[] | undefined;
  let size = 0;
  let status = 0;
  let headers: Record<string, string | string[]> = {};
  let sent: OutgoingHttpHeaders = {};
  /** The answer being written was replaced by a stored one: its body is dropped. */
  let replacedBy: StoredAnswer | undefined;
  /** The stored answer's body is being written: it passes as it is. */
  let sendingStored = false;
  const keep = (chunk: unknown, encoding: unknown) => {
    if (chunks === undefined || chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const buf = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    size += buf.length;
    if (size > options.maxBytes) chunks = undefined;
    else chunks.push(buf);
  };
  return {
    head(code, reason, maybe) {
      const given = (typeof reason === 'string' ? maybe : reason) as OutgoingHttpHeaders | undefined;
      const stale = ERROR_STATUSES.has(code) ? options.stale?.(code) : undefined;
      if (stale !== undefined) options.onStaleServed();
      const stored =
        stale ??
        (code === 304 && options.notModified !== undefined && given !== undefined && !Array.isArray(given)
          ? options.notModified(storedHead(given), given)
          : undefined);
      if (stored !== undefined) {
        replacedBy = stored;
        return raw.head.call(res, stored.status, stored.head);
      }
      status = code;
      sent = { ...res.getHeaders(), ...given };
      headers = storedHead(given ?? {});
      chunks = Array.isArray(given) ? undefined : [];
      const out = { ...given, 'cache-status': options.cacheStatus };
      return typeof reason === 'string' ? raw.head.call(res, code, reason, out) : raw.head.call(res, code, out);
    },
    write(chunk, encoding, cb) {
      if (sendingStored) return raw.write.call(res, chunk, encoding, cb);
      if (replacedBy !== undefined) return true;
      keep(chunk, encoding);
      return raw.write.call(res, chunk, encoding, cb);
    },
    end(chunk, encoding, cb) {
      if (replacedBy !== undefined) {
        // The stored body goes once: the forward endpoint ends a 304 itself, then again when the call completes.
        const body = replacedBy.body;
        replacedBy = { ...replacedBy, body: undefined };
        const done = typeof chunk === 'function' ? chunk : typeof encoding === 'function' ? encoding : cb;
        // HTTP/2's end(chunk) writes the chunk through res.write, which is this recorder's.
        sendingStored = true;
        try {
          return raw.end.call(res, body, done);
        } finally {
          sendingStored = false;
        }
      }
      keep(chunk, encoding);
      const body = chunks;
      if (body !== undefined && status !== 0 && (options.storesErrors || status < 500)) {
        const answer = { status, headers, sent, body: Buffer.concat(body, size) };
        res.once('finish', () => options.onComplete(answer));
      }
      return raw.end.call(res, chunk, encoding, cb);
    },
  };
}

/** The head as stored: what the backend (and the route's header rules, and compression) made of it. */
function storedHead(given: OutgoingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in given) {
    const lower = name.toLowerCase();
    const v = given[name];
    if (v === undefined || NOT_STORED.has(lower)) continue;
    out[lower] = Array.isArray(v) ? v.map(String) : String(v);
  }
  return out;
}
