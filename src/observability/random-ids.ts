/**
 * Random ids for every request: trace and span ids (trace-context.ts) and generated request ids
 * (request-id.ts). They are read from one pooled buffer of CSPRNG bytes, refilled with
 * randomFillSync every 4 KiB, so a request makes no crypto call of its own.
 *
 * `randomUuid` writes its 36 characters into a scratch buffer and reads them back as one flat
 * string, where `crypto.randomUUID()` concatenates about twenty pieces: about 600 bytes less
 * garbage a request (docs/performance.md, "Request ids are written, not concatenated").
 */
import { randomFillSync } from 'node:crypto';

const POOL = Buffer.allocUnsafe(4096);
let poolOffset = POOL.length;

/** `bytes` fresh random bytes, at `POOL[offset]`. */
function take(bytes: number): number {
  if (poolOffset + bytes > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const offset = poolOffset;
  poolOffset += bytes;
  return offset;
}

/** `bytes` random bytes as lower-case hex. */
export function randomHex(bytes: number): string {
  const offset = take(bytes);
  return POOL.toString('hex', offset, offset + bytes);
}

const HEX = Buffer.from('0123456789abcdef', 'latin1');
const UUID = Buffer.alloc(36, '-');

/**
 * A random (version 4) UUID, lower-case, as RFC 9562 section 5.4 lays it out.
 * @example randomUuid() // '3f2b8c1e-9a4d-4e7f-b2c6-0d1e2f3a4b5c'
 */
export function randomUuid(): string {
  const offset = take(16);
  let at = 0;
  for (let i = 0; i < 16; i++) {
    let byte = POOL[offset + i]!;
    if (i === 6)
      byte = (byte & 0x0f) | 0x40; // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80; // variant 10
    if (i === 4 || i === 6 || i === 8 || i === 10) at++; // the dashes stay where alloc put them
    UUID[at++] = HEX[byte >> 4]!;
    UUID[at++] = HEX[byte & 0x0f]!;
  }
  return UUID.toString('latin1', 0, 36);
}
