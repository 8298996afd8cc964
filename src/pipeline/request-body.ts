/**
 * The client's body as a backend call sends it: the buffered one when the route buffers
 * (layers/request-buffer.ts), else the client's stream itself. Read by every call of the core
 * (upstream/call/), whichever endpoint makes it.
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { Exchange } from './types.js';

/** True when the client request announces a body. */
export function announcesBody(req: IncomingMessage): boolean {
  const h = req.headers;
  return h['transfer-encoding'] !== undefined || (h['content-length'] !== undefined && h['content-length'] !== '0');
}

/** The layer that reads the whole body before calling `next`. Requests without a body pass. */
/**
 * The body to send to the backend: the buffered one when the route buffers, else the client's
 * stream itself, or null when there is none.
 */
export function upstreamBody(ex: Exchange): Buffer | Readable | null {
  const body = ex.body;
  if (body !== undefined)
    return Buffer.isBuffer(body) ? body : body.handle.createReadStream({ start: 0, autoClose: false });
  return announcesBody(ex.req) ? ex.req : null;
}

/** The `content-length` to add for a buffered body the client sent chunked (undefined if none). */
export function bufferedLength(ex: Pick<Exchange, 'body' | 'req'>): number | undefined {
  const body = ex.body;
  if (body === undefined || ex.req.headers['content-length'] !== undefined) return undefined;
  return Buffer.isBuffer(body) ? undefined : body.size; // undici sets it for a Buffer itself
}
