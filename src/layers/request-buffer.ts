/**
 * Request buffering: a route's request body is read completely before the backend call starts,
 * as nginx does by default (`proxy_request_buffering on`). A pooled backend connection is then
 * held only while bytes flow at the gateway's speed, never while a client trickles its upload:
 * without it, as many slow uploads as the pool has connections take every connection to that
 * backend, and every other route of the backend waits.
 *
 * The first `limits.requestBufferBytes` of a body stay in memory; a larger body spills to an
 * anonymous temporary file (created in the OS temporary directory and unlinked at once, so it
 * never outlives the process and no other process can open it), read back as the backend call's
 * body. A route with `requestBuffering: false` streams its body to the backend as it arrives
 * instead (large uploads that must start at once, long-lived request streams).
 *
 * Bounded: the body is at most the route's `maxBodyBytes` (the body limit layer answers 413 and
 * closes the connection past it), and silence from the client is bounded by
 * `timeouts.clientBodySec` (408), both checked before this layer by the guards. The temporary
 * files of all bodies together, and of one client's, are capped by the spill budget
 * (layers/spill-budget.ts): past a cap the body is refused unread (429 for the client's cap, 503
 * for the process's), and its connection closes as after a 413.
 */
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Exchange, Layer, RequestBody } from '../pipeline/types.js';
import { announcesBody } from '../pipeline/request-body.js';
import { sendError } from '../response/send-error.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import {
  createSpillReservation,
  type SpillBudget,
  type SpillCaps,
  type SpillLimit,
  type SpillReservation,
} from './spill-budget.js';

/**
 * Seconds a refused upload is told to wait: a spilled body is released when its request ends, at
 * the pace of uploads the gateway cannot foresee, so this spaces retries rather than promises.
 */
export const SPILL_RETRY_AFTER_SEC = 5;

export interface RequestBufferOptions {
  /** Bytes kept in memory before the body spills to a temporary file. */
  readonly memoryBytes: number;
  /** Where spilled bodies go; the OS temporary directory unless given. */
  readonly dir?: string;
  readonly logger: Logger;
  /** Told of every body refused by the spill budget ('body:spill-refused'). */
  readonly events: EventBus;
  readonly spill: {
    readonly budget: SpillBudget;
    readonly caps: SpillCaps;
    /** The key a client's bytes are counted under: its rate-limit key. */
    readonly clientOf: (req: IncomingMessage) => string;
  };
}

/** A body refused by the spill budget while it was being read. */
class SpillRefused extends Error {
  constructor(
    readonly limit: SpillLimit,
    readonly bytes: number,
  ) {
    super(`spill refused by the ${limit} cap`);
  }
}

export function requestBufferLayer(options: RequestBufferOptions): Layer {
  // The OS directory is read when a body spills, not here: os.tmpdir() reads the environment each
  // call (about 4 us), once per route at every load and reload otherwise.
  const dir = options.dir;
  const { budget, caps, clientOf } = options.spill;
  return (next) => (ex) => {
    const { req, res } = ex;
    if (!announcesBody(req)) return next(ex);
    // Nobody is left to answer, and no event would come to end the read.
    if (clientLeft(req)) return Promise.resolve();
    const reservation = createSpillReservation(budget, () => clientOf(req), caps);
    // Once the body spills, every way the exchange ends closes the file and gives its bytes back:
    // an answer sent, a refusal, or the client gone ('close' comes for each, on both protocols).
    let body: RequestBody | undefined;
    let closed: boolean | undefined;
    const onSpill = () => {
      if (closed !== undefined) return;
      closed = false;
      res.once('close', () => {
        closed = true;
        void closeBody(body, reservation);
      });
    };
    // A body that will spill reserves its whole declared length before a byte of it is read.
    const declared = Number(req.headers['content-length'] ?? 0);
    const refused = declared > options.memoryBytes ? reservation.holdUpTo(declared) : undefined;
    if (refused !== undefined) {
      refuseSpill(ex, options, reservation, new SpillRefused(refused, declared));
      return Promise.resolve();
    }
    if (declared > options.memoryBytes) onSpill();
    return readBody(req, options.memoryBytes, dir, reservation, onSpill).then(
      (read) => {
        // The client left, or a guard refused the body (413, 408) and answered already.
        if (read === undefined || closed === true || res.writableEnded || res.destroyed)
          return closeBody(read, reservation);
        ex.body = body = read;
        return next(ex);
      },
      (err: unknown) => {
        if (err instanceof SpillRefused) return refuseSpill(ex, options, reservation, err);
        options.logger.error(
          { reqId: ex.requestId, route: ex.route.id, dir: dir ?? tmpdir(), err },
          'cannot buffer the request body to a temporary file',
        );
        ex.errorCode = 'GW_INTERNAL';
        if (!res.headersSent) sendError(res, 'GW_INTERNAL', { connection: 'close' });
      },
    );
  };
}

/**
 * True when the client is gone. An HTTP/2 request (server/http2-request.ts) is never destroyed
 * when its stream is reset, and reads as complete; `aborted` tells, for both protocols.
 */
function clientLeft(req: IncomingMessage): boolean {
  return req.destroyed || (req as { readonly aborted?: boolean }).aborted === true;
}

/**
 * 429 past the client's cap, 503 past the process's, unread: the connection closes rather than
 * draining a body the gateway will not keep. What the request held is released by then.
 */
function refuseSpill(
  ex: Exchange,
  options: RequestBufferOptions,
  reservation: SpillReservation,
  refusal: SpillRefused,
): void {
  const { budget } = options.spill;
  const { client } = reservation;
  reservation.release();
  options.events.emit('body:spill-refused', {
    requestId: ex.requestId,
    routeId: ex.route.id,
    client,
    limit: refusal.limit,
    bytes: refusal.bytes,
    clientBytes: budget.bytesOf(client),
    totalBytes: budget.bytes,
  });
  const code = refusal.limit === 'client' ? 'GW_BODY_SPILL_CLIENT_LIMIT' : 'GW_BODY_SPILL_FULL';
  ex.errorCode = code;
  sendError(ex.res, code, { connection: 'close', 'retry-after': SPILL_RETRY_AFTER_SEC });
}

/** Closes a spilled body's file, then gives its bytes back to the budget. */
async function closeBody(body: RequestBody | undefined, reservation: SpillReservation): Promise<void> {
  if (body !== undefined && !Buffer.isBuffer(body)) await body.handle.close().catch(() => undefined);
  reservation.release();
}

/**
 * Reads `req` to its end: a Buffer while it fits in `memoryBytes`, else a temporary file whose
 * bytes `reservation` holds first. Resolves undefined when the request ends without its body
 * (client gone, body refused), rejects with SpillRefused past a spill cap; in both cases, and on
 * a file error, the file is closed and the reservation released.
 */
function readBody(
  req: IncomingMessage,
  memoryBytes: number,
  dir: string | undefined,
  reservation: SpillReservation,
  onSpill: () => void,
): Promise<RequestBody | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let file: SpillFile | undefined;
    let failed = false;

    const discard = () => void (file?.close() ?? Promise.resolve()).finally(() => reservation.release());
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      cleanup();
      discard();
      reject(err);
    };
    const spill = (chunk: Buffer) => {
      const refused = reservation.holdUpTo(size);
      if (refused !== undefined) {
        req.pause();
        fail(new SpillRefused(refused, size));
        return;
      }
      // The request is paused while a write is pending, so at most one chunk (a socket read)
      // waits in memory.
      if (file === undefined) onSpill();
      file ??= createSpillFile(dir ?? tmpdir());
      req.pause();
      file.write([...chunks.splice(0), chunk]).then(() => {
        if (!failed) req.resume();
      }, fail);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (file === undefined && size <= memoryBytes) chunks.push(chunk);
      else spill(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (file === undefined) {
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
        return;
      }
      file.written().then((handle) => {
        if (!failed) resolve({ handle, size });
      }, fail);
    };
    const onAborted = () => {
      cleanup();
      discard();
      resolve(undefined);
    };
    const onClose = () => {
      if (!req.complete) onAborted();
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onClose);
      req.off('aborted', onAborted);
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
    req.once('error', onClose);
    // An HTTP/2 stream reset reads as complete, then ends: only 'aborted' says the body is cut.
    req.once('aborted', onAborted);
    req.resume();
  });
}

/** The temporary file of one body: opened at once, written in order, closed once. */
interface SpillFile {
  /** Appends `chunks` after every earlier write; resolves once they are written. */
  write(chunks: readonly Buffer[]): Promise<void>;
  /** The handle, once every write so far is done. */
  written(): Promise<FileHandle>;
  /** Closes the file once pending writes settled; never rejects. */
  close(): Promise<void>;
}

function createSpillFile(dir: string): SpillFile {
  const opening = openAnonymousFile(dir);
  // Never rejects: a failed write is reported to its own caller, and later ones still queue.
  let writing: Promise<unknown> = opening.catch(() => undefined);
  return {
    write(chunks) {
      const done = writing
        .then(() => opening)
        .then(async (f) => {
          for (const c of chunks) await f.write(c);
        });
      writing = done.catch(() => undefined);
      return done;
    },
    written: () => writing.then(() => opening),
    close: () =>
      writing
        .then(() => opening)
        .then((f) => f.close())
        .catch(() => undefined),
  };
}

/** A file only this process can reach: created exclusively, owner-only, unlinked at once. */
async function openAnonymousFile(dir: string): Promise<FileHandle> {
  const path = join(dir, `portico-body-${randomBytes(8).toString('hex')}`);
  const handle = await open(path, 'wx+', 0o600);
  await unlink(path).catch(async (err: unknown) => {
    await handle.close();
    throw err;
  });
  return handle;
}
