/**
 * Reading bounded bodies: the primary body of a mapped route and the mapping answers are buffered,
 * but never beyond `limits.maxMappingBodyBytes` (docs/design-decisions.md); compressed bodies are decoded
 * within the same bound.
 */
import type { Readable } from 'node:stream';
import { brotliDecompress, gunzip, inflate, inflateRaw, type ZlibOptions } from 'node:zlib';
import { promisify } from 'node:util';

export interface LimitedRead {
  readonly chunks: Buffer[];
  readonly size: number;
  /**
   * True when the body is larger than the limit: reading stopped after the chunk that crossed it
   * and the stream is paused there, so the caller can still pipe the rest.
   */
  readonly overflow: boolean;
}

/** Reads `stream` to its end, or until more than `limit` bytes arrived. */
export function readLimited(stream: Readable, limit: number): Promise<LimitedRead> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > limit) {
        stream.pause();
        done();
        resolve({ chunks, size, overflow: true });
      }
    };
    const onEnd = () => {
      done();
      resolve({ chunks, size, overflow: false });
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
  });
}

/** True for a JSON media type, or when the backend named none (a bare `res.end(json)`). */
export function isJsonContentType(value: string | string[] | undefined): boolean {
  if (value === undefined) return true;
  const first = Array.isArray(value) ? value[0] : value;
  if (first === undefined) return true;
  const semi = first.indexOf(';');
  const type = (semi < 0 ? first : first.slice(0, semi)).trim().toLowerCase();
  return type === 'application/json' || type === 'text/json' || type.endsWith('+json');
}

const gunzipAsync = promisify<Buffer, ZlibOptions, Buffer>(gunzip);
const inflateAsync = promisify<Buffer, ZlibOptions, Buffer>(inflate);
const inflateRawAsync = promisify<Buffer, ZlibOptions, Buffer>(inflateRaw);
const brotliAsync = promisify<Buffer, ZlibOptions, Buffer>(
  brotliDecompress as (b: Buffer, o: ZlibOptions, cb: (e: Error | null, r: Buffer) => void) => void,
);

/**
 * The most a body may grow when decoded: JSON compresses about 5 to 20 times, and even very
 * repetitive JSON stays well under this; a small compressed body that would decode to many times
 * more is a decompression bomb, stopped before it is inflated (docs/compression.md).
 */
export const MAX_DECODE_RATIO = 200;

/**
 * Undoes `Content-Encoding` (gzip, deflate, br, identity; several in the order applied).
 * Undefined when an encoding is unknown, the data is corrupt, or the result exceeds `limit` or
 * MAX_DECODE_RATIO times the encoded size.
 */
export async function decodeBody(
  raw: Buffer,
  contentEncoding: string | string[] | undefined,
  limit: number,
): Promise<Buffer | undefined> {
  if (contentEncoding === undefined) return raw;
  const codings = (Array.isArray(contentEncoding) ? contentEncoding.join(',') : contentEncoding)
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  let body = raw;
  const options = { maxOutputLength: Math.max(1, Math.min(limit, raw.length * MAX_DECODE_RATIO)) };
  try {
    for (let i = codings.length - 1; i >= 0; i--) {
      const coding = codings[i];
      if (coding === 'gzip' || coding === 'x-gzip') body = await gunzipAsync(body, options);
      else if (coding === 'br') body = await brotliAsync(body, options);
      // "deflate" means zlib-wrapped (RFC 9110 8.4.1.2), but some servers send it raw.
      else if (coding === 'deflate')
        body = await inflateAsync(body, options).catch(() => inflateRawAsync(body, options));
      else return undefined;
    }
  } catch {
    return undefined;
  }
  return body.length > limit ? undefined : body;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The body as text, or undefined when it is not valid UTF-8 (JSON must be: RFC 8259 8.1). */
export function utf8Text(body: Buffer): string | undefined {
  try {
    return utf8.decode(body);
  } catch {
    return undefined;
  }
}

/** The values of header `name` (lower case) in undici's raw list, as undici's own parse gives them. */
export function rawHeaderValue(raw: Buffer[], name: string): string | string[] | undefined {
  let value: string | string[] | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.length !== name.length || raw[i]!.toString('latin1').toLowerCase() !== name) continue;
    const v = raw[i + 1]!.toString('latin1');
    value = value === undefined ? v : Array.isArray(value) ? [...value, v] : [value, v];
  }
  return value;
}
