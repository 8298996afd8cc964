/**
 * The calls whose answer the gateway reads itself and that take no part in a route's retries or
 * circuit (an auth service's verdict, a health probe) go out here. A call on a pool of an
 * upstream is counted on it while it runs, like the routes' own calls, since they share its
 * connections; a call that is answered is reported ('upstream:response'). JSON calls, which
 * retry and hold a circuit permit, go through the outbound-call core (./json-call.ts).
 */
import type { Dispatcher } from 'undici';
import type { EventBus, UpstreamCall } from '../../observability/events.js';
import type { BackendPool } from '../types.js';
import { callEnded } from './pool-count.js';

/** One GET, or a POST with a small body (token introspection); the timeouts are undici's own (0 or absent: none but the signal). */
export interface ReadRequest {
  /** GET when absent. */
  readonly method?: 'GET' | 'POST';
  readonly path: string;
  /** Sent whole, with the content-length undici sets for a string or Buffer. */
  readonly body?: string | Buffer | undefined;
  readonly headers: string[] | Record<string, string>;
  readonly signal?: AbortSignal | undefined;
  readonly headersTimeoutMs?: number | undefined;
  readonly bodyTimeoutMs?: number | undefined;
}

/** Where an answered call is reported. */
export interface ReadReport {
  readonly events: EventBus;
  readonly routeId: string;
  readonly origin: string;
  readonly call: UpstreamCall;
}

/**
 * Sends `request` on `target` and hands the answer to `read`, which must consume or destroy its
 * body. A `BackendPool` taken with `callStarted` is counted until `read` is done; a bare
 * dispatcher (a probe, a pool of its own) is not counted.
 */
export async function readCall<T>(
  target: { readonly pool: BackendPool } | { readonly dispatcher: Dispatcher },
  request: ReadRequest,
  report: ReadReport | undefined,
  read: (answer: Dispatcher.ResponseData) => Promise<T> | T,
): Promise<T> {
  const pool = 'pool' in target ? target.pool : undefined;
  const dispatcher = pool?.dispatcher ?? (target as { readonly dispatcher: Dispatcher }).dispatcher;
  const started = performance.now();
  try {
    const answer = await dispatcher.request({
      method: request.method ?? 'GET',
      path: request.path,
      body: request.body,
      headers: request.headers,
      signal: request.signal,
      headersTimeout: request.headersTimeoutMs,
      bodyTimeout: request.bodyTimeoutMs,
    });
    if (report !== undefined) reportAnswer(report, answer.statusCode, started);
    return await read(answer);
  } finally {
    if (pool !== undefined) callEnded(pool);
  }
}

/** Reports an answer's head ('upstream:response'), its latency from `started` (a `performance.now()` reading). */
export function reportAnswer(report: ReadReport, status: number, started: number): void {
  report.events.emit('upstream:response', {
    routeId: report.routeId,
    origin: report.origin,
    call: report.call,
    status,
    durationMs: performance.now() - started,
  });
}
