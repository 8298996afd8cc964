/**
 * The mirror step of a route (docs/routing.md "Mirroring"): a copy of a sample of the route's
 * requests goes to another service, and the request goes on to its backend as if there were none.
 *
 * The client's answer never waits for the mirror, nor for the sending of the copy: on the
 * request's way the step only decides (sample, free slot, body size), takes a slot and notes the
 * copy's head; the copy is sent once the client's answer has been sent (its 'finish', or 'close'
 * when the client left), so the connection, the write and the timer of a copy are never paid for
 * between a request and its answer. A
 * buffered body (layers/request-buffer.ts) is sent as it is; a streamed body is copied chunk by
 * chunk as the backend call reads it, with no pause of the client's stream (the copy only
 * listens), and sent once complete. The copy is dropped, and counted, when the route has
 * `maxInFlight` copies taken already, when the body is larger than `maxBodyBytes` (or was spilled
 * to a temporary file), or when the client's body ends early. What the primary is sent is never
 * changed.
 */
import type { Dispatcher } from 'undici';
import type { IncomingMessage } from 'node:http';
import type { MirrorSpec } from '../config/types.js';
import type { CompiledRoute, Exchange, Layer } from '../pipeline/types.js';
import type { EventBus, MirrorDropReason } from '../observability/events.js';
import type { UpstreamRegistry } from '../upstream/upstream.js';
import { routeDropSet, type RequestDropSet } from '../upstream/trust-boundary.js';
import { announcesBody } from '../pipeline/request-body.js';
import { backendHeaders, backendPath } from '../upstream/call/route-call.js';
import { createSampler } from '../mirror/sample.js';
import { sendMirrorCopy, type MirrorCopy, type MirrorTarget } from '../mirror/mirror-call.js';

export interface MirrorLayerOptions {
  /** Where the mirror's own pool is made (upstream/upstream.ts `mirrorPool`). */
  readonly upstreams: Pick<UpstreamRegistry, 'mirrorPool'>;
  /** The configuration's drop set; the route's is made from it, so the mirror is sent what the backend is sent. */
  readonly dropHeaders: RequestDropSet;
  readonly events: EventBus;
}

/** Copies a sample of the route's requests to `mirror.service`. */
export function mirrorLayer(route: CompiledRoute, mirror: MirrorSpec, options: MirrorLayerOptions): Layer {
  const { events } = options;
  const pool = options.upstreams.mirrorPool(mirror.origin);
  const sample = createSampler(mirror.percent);
  const target: MirrorTarget = {
    dispatcher: pool.dispatcher,
    routeId: route.id,
    timeoutMs: mirror.timeoutMs,
    events,
  };
  const dropHeaders = routeDropSet(options.dropHeaders, {
    kind: route.kind,
    allowUnderscores: route.headers.allowUnderscores,
  });
  const call = { route, upstream: pool, dropHeaders, identityEncoding: false };
  let inFlight = 0;
  const release = () => {
    inFlight--;
  };
  // One event object per reason, made once: a drop is the common case past `maxInFlight`.
  const drops: Record<MirrorDropReason, { routeId: string; reason: MirrorDropReason }> = {
    'in-flight-limit': { routeId: route.id, reason: 'in-flight-limit' },
    'body-too-large': { routeId: route.id, reason: 'body-too-large' },
    'body-incomplete': { routeId: route.id, reason: 'body-incomplete' },
  };
  const dropped = (reason: MirrorDropReason) => events.emit('mirror:dropped', drops[reason]);
  const send = (copy: MirrorCopy, body: Buffer | null) => sendMirrorCopy(target, copy, body, release);

  return (next) => (ex) => {
    if (!sample()) return next(ex);
    if (inFlight >= mirror.maxInFlight) {
      dropped('in-flight-limit');
      return next(ex);
    }
    // The head is read now, from the request as it stands at this step (the client's address is
    // gone from an HTTP/1.1 request once answered); only the sending waits for the answer.
    const copy = copyOf(ex, call);
    const body = ex.body;
    if (body !== undefined) {
      // A body spilled to a file is larger than the memory buffer: never read back for a copy.
      if (!Buffer.isBuffer(body) || body.length > mirror.maxBodyBytes) dropped('body-too-large');
      else {
        inFlight++;
        afterAnswer(ex, () => send(copy, body));
      }
    } else if (!announcesBody(ex.req) || copy.method === 'GET' || copy.method === 'HEAD') {
      inFlight++;
      afterAnswer(ex, () => send(copy, null));
    } else if (Number(ex.req.headers['content-length'] ?? 0) > mirror.maxBodyBytes) dropped('body-too-large');
    else {
      // The slot is taken now: the chunks held while the body arrives count against it. The copy
      // goes once both the body is whole and the answer sent, whichever comes last.
      inFlight++;
      let waiting = 2;
      let copied: Buffer | 'body-too-large' | 'body-incomplete' = 'body-incomplete';
      const ready = () => {
        if (--waiting > 0) return;
        if (typeof copied !== 'string') send(copy, copied);
        else {
          release();
          dropped(copied);
        }
      };
      teeBody(ex.req, mirror.maxBodyBytes, (result) => {
        copied = result;
        ready();
      });
      afterAnswer(ex, ready);
    }
    return next(ex);
  };
}

/**
 * Runs `then` once the client's answer has been handed to its connection ('finish'), or the
 * exchange ended without one ('close': the client left, the stream was reset): the copy is the
 * mirror's business, never the answer's.
 */
function afterAnswer(ex: Exchange, then: () => void): void {
  const res = ex.res;
  if (res.writableFinished || res.destroyed) {
    then();
    return;
  }
  const once = () => {
    res.off('finish', once);
    res.off('close', once);
    then();
  };
  res.on('finish', once);
  res.on('close', once);
}

/** The copy's method, path and headers: what the primary is sent, with the mirror's own Host. */
function copyOf(ex: Exchange, call: Parameters<typeof backendHeaders>[0]): MirrorCopy {
  const headers = backendHeaders(call, ex);
  // The copy's body is a Buffer whose length undici writes; the client's framing is not the copy's.
  for (let i = headers.length - 2; i >= 0; i -= 2) {
    const name = headers[i]!.toLowerCase();
    if (name === 'content-length' || name === 'transfer-encoding') headers.splice(i, 2);
  }
  return {
    method: (ex.req.method === 'HEAD' ? 'HEAD' : call.route.method) as Dispatcher.HttpMethod,
    path: backendPath(call.route, ex),
    headers,
  };
}

/**
 * Copies the chunks of a streamed body as they pass, without taking part in the flow: the stream
 * is paused first so that the listener does not start it before the backend call reads (every
 * reader then sees every chunk, as layers/body-limit.ts counts them), and the listener never
 * pauses it. `done` gets the whole body, or why there is none to send.
 */
function teeBody(
  req: IncomingMessage,
  maxBytes: number,
  done: (body: Buffer | 'body-too-large' | 'body-incomplete') => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size <= maxBytes) {
      chunks.push(chunk);
      return;
    }
    stop();
    chunks.length = 0;
    done('body-too-large');
  };
  const onEnd = () => {
    // Node drops the 'data' listeners of a body nobody read before it answered (it dumps it):
    // then the chunks seen are not the whole body.
    const whole = req.listeners('data').includes(onData);
    stop();
    if (whole) done(Buffer.concat(chunks, size));
    else {
      chunks.length = 0;
      done('body-incomplete');
    }
  };
  const onCut = () => {
    stop();
    chunks.length = 0;
    done('body-incomplete');
  };
  const stop = () => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('close', onCut);
    req.off('error', onCut);
  };
  req.pause();
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('close', onCut);
  req.on('error', onCut);
}
