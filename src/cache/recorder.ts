/**
 * Records a cached route's answer as it leaves the gateway (layers/cache.ts): set beneath the
 * response's compression (response/compression/compress-response.ts `interceptBeneath`), so the
 * head and bytes it sees are the ones the client gets. The body is kept as it is written, up to
 * `maxBytes`, and handed over once the client has all of it: never read twice, never stored when
 * the client left first. An answer with an error status inside a stale entry's stale-if-error
 * window is replaced by that entry (RFC 5861 4).
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { RawWriter } from '../response/compression/compress-response.js';
import { storedAnswerHead } from './hit.js';
import type { CacheEntry } from './store.js';

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
  /** The stale entry that may stand in for an error, with its age now; undefined: none. */
  readonly stale: (() => { entry: CacheEntry; ageSec: number } | undefined) | undefined;
  readonly isHead: boolean;
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
  /** The answer being written was replaced by the stale entry: its body is dropped. */
  let replacedBy: CacheEntry | undefined;
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
      const stale = ERROR_STATUSES.has(code) ? options.stale?.() : undefined;
      if (stale !== undefined) {
        replacedBy = stale.entry;
        options.onStaleServed();
        const status = `Portico; hit; detail=stale-if-error; fwd-status=${code}`;
        return raw.head.call(res, stale.entry.status, storedAnswerHead(stale.entry, stale.ageSec, status));
      }
      status = code;
      sent = { ...res.getHeaders(), ...given };
      headers = storedHead(given ?? {});
      chunks = Array.isArray(given) ? undefined : [];
      const out = { ...given, 'cache-status': options.cacheStatus };
      return typeof reason === 'string' ? raw.head.call(res, code, reason, out) : raw.head.call(res, code, out);
    },
    write(chunk, encoding, cb) {
      if (replacedBy !== undefined) return true;
      keep(chunk, encoding);
      return raw.write.call(res, chunk, encoding, cb);
    },
    end(chunk, encoding, cb) {
      if (replacedBy !== undefined) return raw.end.call(res, options.isHead ? undefined : replacedBy.body);
      keep(chunk, encoding);
      const body = chunks;
      if (body !== undefined && status !== 0) {
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
