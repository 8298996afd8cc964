/**
 * A backend call whose 2xx JSON answer is buffered whole, up to a bound, so that the gateway can
 * rewrite it: the primary call of a mapped route (mapping.ts) and the call of a route whose
 * plugins transform JSON answers (json-transform.ts). Any other answer streams as on a standard
 * route. What happens to an answer past the bound is each endpoint's own rule: a mapped route
 * relays it unchanged, a transforming one refuses it (a redacting plugin is never bypassed).
 */
import type { Exchange } from '../pipeline/types.js';
import { BackendCall } from '../upstream/call/backend-call.js';
import type { RouteCall } from '../upstream/call/route-call.js';
import { isJsonContentType } from '../upstream/call/read-body.js';

type Headers = Record<string, string | string[]>;

/** Headers that describe the backend's bytes and would lie about a rewritten body. */
const STALE_WHEN_CHANGED = [
  'content-length',
  'content-encoding',
  'etag',
  'content-md5',
  'digest',
  'content-digest',
  'repr-digest',
];

/** Makes `headers` describe a new body of `length` bytes in place of the backend's. */
export function describeNewBody(headers: Headers, length: number): void {
  for (const h of STALE_WHEN_CHANGED) delete headers[h];
  headers['content-length'] = String(length);
}

export abstract class BufferedJsonCall extends BackendCall {
  /** The body so far while it is buffered; undefined while relaying. */
  private buffered: Buffer[] | undefined;
  private size = 0;
  protected status = 0;
  protected headers: Headers = {};

  constructor(
    ex: Exchange,
    call: RouteCall,
    resolve: () => void,
    private readonly maxBodyBytes: number,
  ) {
    super(ex, call, resolve);
  }

  /**
   * The answer outgrew `maxBodyBytes`: `buffered` is what came before `chunk`, both empty when
   * the declared length already said so. Returns whether to go on reading the backend's answer.
   */
  protected abstract tooLarge(ex: Exchange, buffered: Buffer[], chunk: Buffer | undefined): boolean;

  /** The whole body, once the backend call is over (its connection is free again). */
  protected abstract useBody(ex: Exchange, body: Buffer): void;

  /** Whether this answer is one to buffer; the others stream unchanged. */
  protected wantsBody(status: number, headers: Headers): boolean {
    return isRewritableStatus(status) && isJsonContentType(headers['content-type']);
  }

  protected onResponse(ex: Exchange, statusCode: number, headers: Headers): boolean {
    if (!this.wantsBody(statusCode, headers)) {
      ex.res.writeHead(statusCode, headers);
      return true;
    }
    this.status = statusCode;
    this.headers = headers;
    if (Number(headers['content-length'] ?? 0) > this.maxBodyBytes) return this.tooLarge(ex, [], undefined);
    this.buffered = [];
    return true;
  }

  protected override onBody(chunk: Buffer): boolean {
    const chunks = this.buffered;
    const ex = this.ex;
    if (chunks === undefined || ex === undefined) return super.onBody(chunk);
    this.size += chunk.length;
    if (this.size <= this.maxBodyBytes) {
      chunks.push(chunk);
      return true;
    }
    this.buffered = undefined;
    return this.tooLarge(ex, chunks, chunk);
  }

  override onComplete(): void {
    const chunks = this.buffered;
    const ex = this.ex;
    if (chunks === undefined || ex === undefined) return super.onComplete();
    this.buffered = undefined;
    // The backend call is over: its connection is free while the body is rewritten.
    this.finish();
    this.useBody(ex, Buffer.concat(chunks, this.size));
  }

  /** Relays the answer unchanged from here on, what was buffered first. */
  protected relayUnchanged(ex: Exchange, buffered: Buffer[], chunk: Buffer | undefined): boolean {
    ex.res.writeHead(this.status, this.headers);
    for (const c of buffered) ex.res.write(c);
    return chunk === undefined ? true : super.onBody(chunk);
  }
}

/** 2xx with a body (not 204/205 without one, not a 206 fragment). */
function isRewritableStatus(status: number): boolean {
  return status >= 200 && status < 300 && status !== 204 && status !== 205 && status !== 206;
}
