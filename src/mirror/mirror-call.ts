/**
 * One copy of a request sent to a route's mirror (docs/routing.md "Mirroring"). Its answer is
 * read and discarded; it is abandoned at `mirror.timeoutSec`, whether it is still waiting for a
 * connection, for the head or for the body, so a mirror that answers slowly or never holds
 * nothing longer than that. Its end is reported as 'mirror:end'; it never throws.
 */
import type { Dispatcher } from 'undici';
import type { EventBus } from '../observability/events.js';

/** What a copy is: fixed when the request is picked, sent once its body is complete. */
export interface MirrorCopy {
  readonly method: Dispatcher.HttpMethod;
  readonly path: string;
  readonly headers: string[];
}

export interface MirrorTarget {
  readonly dispatcher: Dispatcher;
  readonly routeId: string;
  readonly timeoutMs: number;
  readonly events: EventBus;
}

/** Sends `copy` with `body`; `done` runs once when the copy's slot is free again. */
export function sendMirrorCopy(target: MirrorTarget, copy: MirrorCopy, body: Buffer | null, done: () => void): void {
  const started = performance.now();
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), target.timeoutMs);
  let status: number | undefined;
  const end = () => {
    clearTimeout(timer);
    done();
    target.events.emit('mirror:end', {
      routeId: target.routeId,
      // An answer whose body was cut still counts as answered: its head came.
      outcome: status === undefined ? 'failed' : 'answered',
      status,
      durationMs: performance.now() - started,
    });
  };
  target.dispatcher
    .request({
      method: copy.method,
      path: copy.path,
      headers: copy.headers,
      body,
      signal: abort.signal,
      // The whole copy is bounded by the timer above; undici's own timers would only add timers.
      headersTimeout: 0,
      bodyTimeout: 0,
    })
    .then(async (res) => {
      status = res.statusCode;
      // Read to reuse the connection; past undici's dump limit the connection is closed instead.
      await res.body.dump();
    })
    .catch(() => {
      // Refused, reset or abandoned: counted as failed by `end`, never the client's concern.
    })
    .finally(end);
}
