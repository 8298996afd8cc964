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
 * `timeouts.clientBodySec` (408), both checked before this layer by the guards.
 */
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Layer, RequestBody } from '../pipeline/types.js';
import { announcesBody } from '../pipeline/request-body.js';
import { sendError } from '../response/send-error.js';
import type { Logger } from '../observability/logger.js';

export interface RequestBufferOptions {
  /** Bytes kept in memory before the body spills to a temporary file. */
  readonly memoryBytes: number;
  /** Where spilled bodies go; the OS temporary directory unless given. */
  readonly dir?: string;
  readonly logger: Logger;
}

export function requestBufferLayer(options: RequestBufferOptions): Layer {
  const dir = options.dir ?? tmpdir();
  return (next) => (ex) => {
    if (!announcesBody(ex.req)) return next(ex);
    return readBody(ex.req, options.memoryBytes, dir).then(
      (body) => {
        // The client left, or a guard refused the body (413, 408) and answered already.
        if (body === undefined || ex.res.writableEnded || ex.res.destroyed) return closeBody(body);
        ex.body = body;
        if (!Buffer.isBuffer(body)) ex.res.once('close', () => void closeBody(body));
        return next(ex);
      },
      (err: unknown) => {
        options.logger.error(
          { reqId: ex.requestId, route: ex.route.id, dir, err },
          'cannot buffer the request body to a temporary file',
        );
        ex.errorCode = 'GW_INTERNAL';
        if (!ex.res.headersSent) sendError(ex.res, 'GW_INTERNAL', { connection: 'close' });
      },
    );
  };
}

async function closeBody(body: RequestBody | undefined): Promise<void> {
  if (body !== undefined && !Buffer.isBuffer(body)) await body.handle.close().catch(() => undefined);
}

/**
 * Reads `req` to its end: a Buffer while it fits in `memoryBytes`, else a temporary file.
 * Resolves undefined when the request ends without its body (client gone, body refused).
 */
function readBody(req: IncomingMessage, memoryBytes: number, dir: string): Promise<RequestBody | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let file: FileHandle | undefined;
    let opening: Promise<FileHandle> | undefined;
    let writing: Promise<unknown> = Promise.resolve();
    let failed = false;

    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      cleanup();
      void (opening ?? Promise.resolve(undefined)).then((f) => f?.close()).catch(() => undefined);
      reject(err);
    };
    const spill = (chunk: Buffer) => {
      // Writes go in order; the request is paused while one is pending, so at most one chunk
      // (a socket read) waits in memory.
      opening ??= openAnonymousFile(dir).then((f) => (file = f));
      const pending = chunks.splice(0);
      req.pause();
      writing = writing
        .then(() => opening)
        .then(async (f) => {
          for (const c of pending) await f!.write(c);
          await f!.write(chunk);
          if (!failed) req.resume();
        })
        .catch(fail);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (opening === undefined && size <= memoryBytes) chunks.push(chunk);
      else spill(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (opening === undefined) {
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
        return;
      }
      writing.then(() => {
        if (!failed) resolve({ handle: file!, size });
      }, fail);
    };
    const onClose = () => {
      if (req.complete) return;
      cleanup();
      void writing.then(() => file?.close()).catch(() => undefined);
      resolve(undefined);
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onClose);
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
    req.once('error', onClose);
    req.resume();
  });
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
