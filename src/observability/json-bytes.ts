/**
 * Writers of JSON text straight into a Buffer, for a line that is encoded where it is batched
 * (access-log.ts) instead of being built as a string first: no intermediate strings, so nothing
 * per line for the garbage collector. Each takes the position to write at and returns the
 * position after what it wrote; the caller has made sure the buffer has room
 * (`JSON_STRING_MAX_BYTES_PER_UNIT`).
 */

/** The most bytes one UTF-16 unit of a string takes in a JSON literal (`\u001f`, a lone surrogate). */
export const JSON_STRING_MAX_BYTES_PER_UNIT = 6;

/**
 * `s` as a JSON string literal: printable ASCII byte by byte, and a string with anything else
 * (a quote, a backslash, a control character, non-ASCII) through `JSON.stringify` as UTF-8.
 */
export function putJsonString(buf: Buffer, at: number, s: string): number {
  let o = at;
  buf[o++] = 0x22;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return at + buf.write(JSON.stringify(s), at);
    buf[o++] = c;
  }
  buf[o++] = 0x22;
  return o;
}

/** Bytes already encoded (constant parts of a line). */
export function putBytes(buf: Buffer, at: number, bytes: Uint8Array): number {
  buf.set(bytes, at);
  return at + bytes.length;
}

/** A non-negative safe integer in decimal. */
export function putUint(buf: Buffer, at: number, n: number): number {
  let end = at + 1;
  for (let p = 10; p <= n; p *= 10) end++;
  for (let i = end - 1, rest = n; i >= at; i--, rest = Math.floor(rest / 10)) buf[i] = 48 + (rest % 10);
  return end;
}

/**
 * A duration in milliseconds rounded to hundredths, written as JavaScript writes that number (1,
 * 1.2, 1.23). From integers: converting the double itself is the slow path of number formatting,
 * a measurable part of the access line's cost (docs/performance.md). Anything but a non-negative
 * safe integer of hundredths goes through that slow path.
 */
export function putHundredths(buf: Buffer, at: number, ms: number): number {
  const h = Math.round(ms * 100);
  if (!(h >= 0 && h <= Number.MAX_SAFE_INTEGER)) return at + buf.write(String(h / 100), at, 'latin1');
  const whole = Math.floor(h / 100);
  const frac = h - whole * 100;
  let o = putUint(buf, at, whole);
  if (frac === 0) return o;
  buf[o++] = 0x2e;
  buf[o++] = 48 + Math.floor(frac / 10);
  if (frac % 10 !== 0) buf[o++] = 48 + (frac % 10);
  return o;
}

const SCRATCH = Buffer.allocUnsafe(32);

/** `putHundredths` as a string. */
export function hundredths(ms: number): string {
  return SCRATCH.toString('latin1', 0, putHundredths(SCRATCH, 0, ms));
}
