/**
 * A client's `Range` answered from a whole stored answer (RFC 9110 14): one byte range, as a cache
 * serves it without the backend. A cached route fetches whole answers (it drops `Range` towards
 * the backend), so a part comes only from the store; anything else (several ranges, another unit,
 * a stale `If-Range`) gets the whole answer, which RFC 9110 14.2 allows.
 */

/** The bytes `[start, end]` (inclusive) of a body of `length` that `range` asks for; undefined: serve it whole. */
export function byteRange(
  range: string | undefined,
  length: number,
): { readonly start: number; readonly end: number } | undefined {
  if (range === undefined || length === 0) return undefined;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(range);
  if (m === null || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    // A suffix: the last N bytes.
    const n = Number(m[2]);
    return n === 0 ? undefined : { start: Math.max(0, length - n), end: length - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? length - 1 : Math.min(Number(m[2]), length - 1);
  return start > end || start >= length ? undefined : { start, end };
}

/** Whether `If-Range` (RFC 9110 13.1.5) still names the stored answer: its strong ETag, or its Last-Modified as sent. */
export function ifRangeHolds(
  ifRange: string | undefined,
  etag: string | undefined,
  lastModified: string | undefined,
): boolean {
  if (ifRange === undefined) return true;
  const v = ifRange.trim();
  if (v.startsWith('"')) return etag !== undefined && etag.trim() === v;
  return lastModified !== undefined && lastModified.trim() === v;
}
