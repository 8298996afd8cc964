/**
 * Compresses one answer on its way out, whoever writes it (a proxied stream, a mapped body, a
 * gateway error): the response's `writeHead`, `write` and `end` are wrapped on this response
 * object only, so the endpoints write as they always do, and routes that do not compress keep
 * Node's own methods. (The `compression` middleware of Express does the same; it cannot be used
 * here: it knows neither zstd, nor weak ETags, nor the flushing of streamed answers below.)
 *
 * At `writeHead` the answer's head decides: compressed only when the client accepts a coding, the
 * status has a body that is not a part (not 1xx, 204, 206, 304), its type is compressible, it is
 * not encoded already, `Cache-Control` does not say `no-transform`, and a declared length is at
 * least `minBytes`. Every answer gets `Vary: Accept-Encoding`, compressed or not, so that a cache
 * in front never hands a compressed answer to a client that did not ask for it. A compressed
 * answer loses its `Content-Length` and `Accept-Ranges` (ranges would be of the coded bytes) and a
 * strong ETag becomes weak (RFC 9110 8.8.1: the bytes differ from the backend's).
 *
 * A body of declared length up to ONE_SHOT_MAX_BYTES (the common JSON answer) is collected as it
 * comes and encoded in one call at its end: a streaming encoder would hold those bytes until its
 * end all the same (nothing is flushed on an answer of known length), and a one-shot encode skips
 * the stream object, its thread-pool round trips and its events, which cost more than the coding
 * of a 20 KB answer itself (docs/compression.md, "Speed"). Anything larger, or of unknown length,
 * streams through an encoder with backpressure both ways, never buffered whole. An answer of
 * unknown length (a stream of JSON lines, a long poll) is flushed whenever its writer pauses, so
 * no chunk waits in the compressor for the next one.
 */
import type { ServerResponse, OutgoingHttpHeaders, OutgoingHttpHeader } from 'node:http';
import type { CompressionAlgorithm } from '../../config/schema.js';
import type { ChooseEncoding } from './accept-encoding.js';
import type { IsCompressible } from './compressible.js';
import type { Encoder, Encoders } from './encoders.js';
import { keepInSlot, slotOf } from './answer-slot.js';

/** What a configuration's compressing routes share, made once per configuration. */
export interface CompressionPolicy {
  readonly choose: ChooseEncoding;
  readonly isCompressible: IsCompressible;
  readonly minBytes: number;
  readonly encoders: Encoders;
}

/** A body of declared length up to this size is encoded in one call; larger ones stream. */
const ONE_SHOT_MAX_BYTES = 64 * 1024;

type Headers = OutgoingHttpHeaders | OutgoingHttpHeader[];
type Callback = (err?: Error | null) => void;

/**
 * Wraps `res` so that its answer is compressed with `coding` when the head allows it (see above);
 * `coding` undefined: the answer only gets `Vary: Accept-Encoding`.
 */
export function compressResponse(
  res: ServerResponse,
  coding: CompressionAlgorithm | undefined,
  policy: CompressionPolicy,
): void {
  const answer = new CompressedAnswer(res, coding, policy);
  keepInSlot(res, answer);
  res.writeHead = writeHeadOf as ServerResponse['writeHead'];
  res.write = writeOf as ServerResponse['write'];
  res.end = endOf as ServerResponse['end'];
}

/** One answer's compression: the response's own methods, and what the wrappers decided. */
class CompressedAnswer {
  private head: HeadFn;
  private rawWrite: WriteFn;
  private rawEnd: EndFn;
  private encoder: Encoder | undefined;
  /** Set by writeHead when the answer is compressed. */
  private compressing = false;
  /** The answer has no declared length: flush whenever the writer pauses. */
  private flushes = false;
  /** The chunks of a short answer of declared length, encoded in one call at its end; else undefined. */
  private held: Buffer[] | undefined;
  private heldBytes = 0;
  private flushPending = false;
  private ended = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly coding: CompressionAlgorithm | undefined,
    private readonly policy: CompressionPolicy,
  ) {
    this.head = res.writeHead as unknown as HeadFn;
    this.rawWrite = res.write as unknown as WriteFn;
    this.rawEnd = res.end as unknown as EndFn;
  }

  /** Puts `wrap` between this compression and the response: it sees the answer as it leaves. */
  beneath(wrap: (raw: RawWriter) => RawWriter): void {
    const w = wrap({ head: this.head, write: this.rawWrite, end: this.rawEnd });
    this.head = w.head;
    this.rawWrite = w.write;
    this.rawEnd = w.end;
  }

  writeHead(status: number, reason?: string | Headers, maybe?: Headers): ServerResponse {
    const { res, coding } = this;
    // Node calls writeHead itself for an implicit head; only the first one counts.
    res.writeHead = this.head as unknown as ServerResponse['writeHead'];
    const given = typeof reason === 'string' ? maybe : reason;
    if (given !== undefined && Array.isArray(given)) return this.head.call(res, status, reason, maybe);
    const fields: OutgoingHttpHeaders = given ?? NO_FIELDS;
    let headers: OutgoingHttpHeaders;
    if (coding !== undefined && shouldCompress(res, status, fields, this.policy)) {
      this.compressing = true;
      const length = valueOf(res, fields, 'content-length');
      this.flushes = length === undefined;
      if (length !== undefined && Number(length) <= ONE_SHOT_MAX_BYTES) this.held = [];
      // A copy without those fields (`delete` would make it a dictionary, slow in writeHead).
      headers = {};
      for (const name in fields)
        if (name !== 'content-length' && name !== 'accept-ranges') headers[name] = fields[name];
      if (res.hasHeader('content-length')) res.removeHeader('content-length');
      if (res.hasHeader('accept-ranges')) res.removeHeader('accept-ranges');
      headers['content-encoding'] = coding;
      const etag = valueOf(res, headers, 'etag');
      if (typeof etag === 'string' && etag.startsWith('"')) headers.etag = `W/${etag}`;
    } else headers = { ...fields };
    addVary(res, headers);
    return typeof reason === 'string'
      ? this.head.call(res, status, reason, headers)
      : this.head.call(res, status, headers);
  }

  write(chunk: unknown, encodingOrCb?: unknown, cb?: unknown): boolean {
    const { res } = this;
    if (!res.headersSent) res.writeHead(res.statusCode);
    // After end: HTTP/2's end(chunk) writes its chunk through write, here already encoded.
    if (!this.compressing || this.ended) return this.rawWrite.call(res, chunk, encodingOrCb, cb);
    if (this.held !== undefined && this.hold(chunk, encodingOrCb)) {
      const done = typeof encodingOrCb === 'function' ? encodingOrCb : cb;
      if (typeof done === 'function') process.nextTick(done as Callback);
      return true;
    }
    const { stream } = this.encoderOf();
    const ok = (stream.write as unknown as WriteFn).call(stream, chunk, encodingOrCb, cb);
    if (this.flushes && !this.flushPending) {
      this.flushPending = true;
      setImmediate(() => this.flushWhenIdle());
    }
    return ok;
  }

  end(chunk?: unknown, encodingOrCb?: unknown, cb?: unknown): ServerResponse {
    const { res } = this;
    if (typeof chunk === 'function') [chunk, encodingOrCb] = [undefined, chunk];
    if (!res.headersSent) res.writeHead(res.statusCode);
    if (!this.compressing || this.ended) return this.rawEnd.call(res, chunk, encodingOrCb, cb);
    this.ended = true;
    const done = (typeof encodingOrCb === 'function' ? encodingOrCb : cb) as Callback | undefined;
    let body = chunk === undefined || chunk === null ? undefined : toBuffer(chunk, encodingOrCb);
    const { held } = this;
    if (held !== undefined && held.length > 0) {
      if (body !== undefined) held.push(body);
      body = held.length === 1 ? held[0] : Buffer.concat(held);
      this.held = undefined;
    }
    if (this.encoder === undefined && (body === undefined || body.length <= ONE_SHOT_MAX_BYTES))
      return this.rawEnd.call(res, this.policy.encoders.encodeSync(this.coding!, body ?? EMPTY), done);
    const { stream } = this.encoderOf();
    stream.once('end', () => this.rawEnd.call(res, done));
    stream.end(body);
    return res;
  }

  /**
   * Keeps a chunk of a short answer for the one-shot encode at its end; false when the answer
   * outgrew the bound after all (its length was wrong): it streams from here, what was held first.
   */
  private hold(chunk: unknown, encoding: unknown): boolean {
    const held = this.held!;
    const buf = toBuffer(chunk, encoding);
    if (this.heldBytes + buf.length <= ONE_SHOT_MAX_BYTES) {
      held.push(buf);
      this.heldBytes += buf.length;
      return true;
    }
    this.held = undefined;
    const { stream } = this.encoderOf();
    for (const earlier of held) stream.write(earlier);
    return false;
  }

  private encoderOf(): Encoder {
    if (this.encoder !== undefined) return this.encoder;
    const { res } = this;
    const encoder = this.policy.encoders.create(this.coding!);
    this.encoder = encoder;
    const { stream } = encoder;
    stream.on('data', (out: Buffer) => {
      if (!this.rawWrite.call(res, out) && !res.destroyed) stream.pause();
    });
    // The client took what was written: the encoder may produce more.
    res.on('drain', () => stream.resume());
    // The encoder took what was written: the writer (waiting for the response's drain) may go on.
    stream.on('drain', () => res.emit('drain'));
    stream.on('error', (err) => res.destroy(err));
    res.once('close', () => stream.destroy());
    return encoder;
  }

  private flushWhenIdle(): void {
    this.flushPending = false;
    const { encoder } = this;
    if (encoder !== undefined && !this.ended && !encoder.stream.destroyed) encoder.flushNow();
  }
}

/** The writers of a response's head and body, as Node's own methods take their arguments. */
export interface RawWriter {
  readonly head: HeadFn;
  readonly write: WriteFn;
  readonly end: EndFn;
}

function answerOf(res: ServerResponse): CompressedAnswer | undefined {
  return slotOf(res) as CompressedAnswer | undefined;
}

// The response's methods while it is compressed: one function each for every response (no
// closures made per answer), finding the answer from the response they are called on.
function writeHeadOf(this: ServerResponse, status: number, reason?: string | Headers, maybe?: Headers): ServerResponse {
  return answerOf(this)!.writeHead(status, reason, maybe);
}
function writeOf(this: ServerResponse, chunk: unknown, encodingOrCb?: unknown, cb?: unknown): boolean {
  return answerOf(this)!.write(chunk, encodingOrCb, cb);
}
function endOf(this: ServerResponse, chunk?: unknown, encodingOrCb?: unknown, cb?: unknown): ServerResponse {
  return answerOf(this)!.end(chunk, encodingOrCb, cb);
}

/**
 * Makes `wrap` see the answer of `res` as it leaves the gateway: beneath its compression when the
 * route compresses (the bytes then are the encoded ones, the head the one with Content-Encoding),
 * else around Node's own methods. The cache stores what it sees so (layers/cache.ts).
 */
export function interceptBeneath(res: ServerResponse, wrap: (raw: RawWriter) => RawWriter): void {
  const answer = answerOf(res);
  if (answer !== undefined) return answer.beneath(wrap);
  const w = wrap({
    head: res.writeHead as unknown as HeadFn,
    write: res.write as unknown as WriteFn,
    end: res.end as unknown as EndFn,
  });
  res.writeHead = w.head as unknown as ServerResponse['writeHead'];
  res.write = w.write as unknown as ServerResponse['write'];
  res.end = w.end as unknown as ServerResponse['end'];
}

export type HeadFn = (this: unknown, status: number, reason?: unknown, headers?: unknown) => ServerResponse;
export type WriteFn = (this: unknown, chunk: unknown, encodingOrCb?: unknown, cb?: unknown) => boolean;
export type EndFn = (this: unknown, chunk?: unknown, encodingOrCb?: unknown, cb?: unknown) => ServerResponse;

const EMPTY = Buffer.alloc(0);
const NO_FIELDS: OutgoingHttpHeaders = Object.freeze({});

function toBuffer(chunk: unknown, encoding: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
}

/** A header's value from the head being written, else from `setHeader`. */
function valueOf(res: ServerResponse, headers: OutgoingHttpHeaders, name: string): OutgoingHttpHeader | undefined {
  return headers[name] ?? res.getHeader(name);
}

function shouldCompress(
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  policy: CompressionPolicy,
): boolean {
  if (status < 200 || status === 204 || status === 206 || status === 304) return false;
  const encoding = valueOf(res, headers, 'content-encoding');
  if (encoding !== undefined && String(encoding).trim().toLowerCase() !== 'identity') return false;
  if (valueOf(res, headers, 'content-range') !== undefined) return false;
  const type = valueOf(res, headers, 'content-type');
  if (!policy.isCompressible(typeof type === 'string' ? type : undefined)) return false;
  const cacheControl = valueOf(res, headers, 'cache-control');
  if (cacheControl !== undefined && /(^|,)\s*no-transform\s*(,|$)/i.test(String(cacheControl))) return false;
  const length = valueOf(res, headers, 'content-length');
  return length === undefined || Number(length) >= policy.minBytes;
}

/** Adds `Accept-Encoding` to the answer's `Vary` (kept as it is when it is `*` or names it already). */
function addVary(res: ServerResponse, headers: OutgoingHttpHeaders): void {
  const before = valueOf(res, headers, 'vary');
  if (before === undefined) {
    headers.vary = 'Accept-Encoding';
    return;
  }
  const text = Array.isArray(before) ? before.join(', ') : String(before);
  if (/(^|,)\s*(\*|accept-encoding)\s*(,|$)/i.test(text)) return;
  headers.vary = `${text}, Accept-Encoding`;
}
