/**
 * A stored answer as bytes, for the shared level (redis-store.ts): a 4-byte length, the head and
 * timing as JSON, then the body as it is (never base64: the body is most of the bytes). The parsed
 * `Cache-Control` is not written: it is read again from the stored head, as the memory level read it.
 * The JSON also holds `until`, the wall-clock millisecond after which the variant is not served
 * (Redis expires the whole hash, whose variants may end at different times).
 */
import { responseDirectives } from './cache-control.js';
import type { CacheEntry } from './store.js';

/** Version of the layout: a replica that reads another version treats the value as absent. */
const VERSION = 1;

export function encodeEntry(entry: CacheEntry, until: number): Buffer {
  const { body, times, ...rest } = entry;
  const { directives: _parsed, ...timing } = times;
  const head = Buffer.from(JSON.stringify({ v: VERSION, until, ...rest, times: timing }));
  const out = Buffer.allocUnsafe(4 + head.length + body.length);
  out.writeUInt32BE(head.length, 0);
  head.copy(out, 4);
  body.copy(out, 4 + head.length);
  return out;
}

/** The entry in `value`; undefined when it is past its end, of another layout, or not one at all. */
export function decodeEntry(value: Buffer, now: number): CacheEntry | undefined {
  if (value.length < 4) return undefined;
  const length = value.readUInt32BE(0);
  if (4 + length > value.length) return undefined;
  let head: unknown;
  try {
    head = JSON.parse(value.toString('utf8', 4, 4 + length));
  } catch {
    return undefined;
  }
  if (!isHead(head) || head.v !== VERSION || head.until <= now) return undefined;
  const { v: _v, until: _until, times, ...rest } = head;
  // The directives the entry was stored under: CDN-Cache-Control when valid (cache/freshness.ts).
  const { directives } = responseDirectives(head.headers);
  return {
    ...(rest as unknown as Omit<CacheEntry, 'body' | 'times'>),
    times: {
      ...(times as unknown as Omit<CacheEntry['times'], 'directives'>),
      directives,
    },
    // A view, not a copy: the reply holds this one value, mostly the body.
    body: value.subarray(4 + length),
  };
}

interface EncodedHead {
  readonly v: number;
  readonly until: number;
  readonly status: number;
  readonly headers: Record<string, string | string[]>;
  readonly times: Record<string, unknown>;
}

function isHead(value: unknown): value is EncodedHead {
  if (value === null || typeof value !== 'object') return false;
  const h = value as Record<string, unknown>;
  return (
    typeof h.v === 'number' &&
    typeof h.until === 'number' &&
    typeof h.status === 'number' &&
    h.headers !== null &&
    typeof h.headers === 'object' &&
    h.times !== null &&
    typeof h.times === 'object' &&
    typeof (h.times as Record<string, unknown>).responseTime === 'number'
  );
}
