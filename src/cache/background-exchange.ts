/**
 * The exchange of a background refresh (stale-while-revalidate, layers/cache.ts): a copy of the
 * request that found the stale entry, run through the rest of the route's pipeline with no client
 * behind it. Its answer goes to a response whose socket drops what is written, so only the cache's
 * recorder keeps it.
 *
 * The copy carries what the triggering request had passed and proved: its head (so the refresh
 * has the same identity, hence the same cache key, and the same credentials the backend saw), the
 * claims and claim headers the auth layer set, and its client's address, TLS state and
 * certificate for the forwarding headers. It is taken while the client is still connected: an
 * HTTP/2 stream's socket cannot be read once the stream closed.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Duplex } from 'node:stream';
import type { CompressionAlgorithm } from '../config/schema.js';
import { createExchange } from '../pipeline/exchange.js';
import { compressResponse, type CompressionPolicy } from '../response/compression/compress-response.js';
import type { Exchange } from '../pipeline/types.js';

/**
 * A copy of `ex` for a background GET of the same URL, and its end: resolved once its answer
 * closed. With `compression`, its answer is compressed in `coding` as the route's compression
 * layer (above the cache) does for a client: the entry refreshed is the variant of that coding.
 */
export function backgroundExchange(
  ex: Exchange,
  coding: CompressionAlgorithm | 'identity',
  compression: CompressionPolicy | undefined,
): { ex: Exchange; closed: Promise<void> } {
  const socket = discardingSocket(ex.req.socket as TLSSocket);
  const req = new IncomingMessage(socket as unknown as Socket);
  // A HEAD that found the entry stale refreshes it with a GET: the body is what is stored.
  req.method = 'GET';
  req.url = ex.req.url ?? '/';
  req.headers = { ...ex.req.headers };
  req.rawHeaders = [...ex.req.rawHeaders];
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  req.httpVersion = '1.1';
  req.complete = true;
  req.push(null);
  const res = new ServerResponse(req);
  res.assignSocket(socket as unknown as Socket);
  if (compression !== undefined) compressResponse(res, coding === 'identity' ? undefined : coding, compression);
  const copy = createExchange(ex.route, req, res, undefined, ex.requestId, ex.params, ex.rawQuery);
  copy.claimHeaders = ex.claimHeaders;
  copy.claims = ex.claims;
  copy.consumer = ex.consumer;
  const closed = new Promise<void>((resolve) =>
    res.once('close', () => {
      copy.onClose?.();
      resolve();
    }),
  );
  // Nobody reads the answer: once it is all written, the socket closes, and the response with it.
  res.once('finish', () => socket.destroy());
  return { ex: copy, closed };
}

/** A socket that takes every byte and drops it, with the client connection's identity. */
function discardingSocket(client: TLSSocket | undefined): Duplex {
  const socket = new Duplex({
    read() {},
    write(_chunk, _encoding, done) {
      done();
    },
  });
  const encrypted = client?.encrypted === true;
  const authorized = encrypted && client.authorized;
  const certificate = authorized ? client.getPeerX509Certificate() : undefined;
  return Object.assign(socket, {
    remoteAddress: client?.remoteAddress,
    remotePort: client?.remotePort,
    encrypted: encrypted || undefined,
    authorized,
    getPeerX509Certificate: () => certificate,
    setTimeout: () => socket,
    setNoDelay: () => socket,
    setKeepAlive: () => socket,
  });
}
