/**
 * Admission control (docs/overload.md): a limit on the requests in flight, for the whole gateway
 * (`config.admission.maxInFlight`) and per route (a route's `admission.maxInFlight`). A request
 * that finds a limit reached is answered 503 `GW_OVERLOADED` with `Retry-After` at once, its body
 * unread, before authentication, body reading and the backend call: at twice the load the
 * gateway can serve, the excess costs almost nothing and the admitted requests keep their latency.
 *
 * Nothing waits in a queue: past capacity a queue is always full, so every admitted request
 * would wait its whole length on top of its service time (docs/overload.md has the measurement).
 *
 * A request holds its slots from here until the client has its answer, except a stream: an SSE
 * route's request releases them once the stream's head is sent (`ex.onResponseStart`), and a
 * WebSocket handshake once it is answered (the endpoint resolves then), so open streams and
 * tunnels never eat the request budget.
 */
import type { CompiledRoute, Exchange, Layer } from '../pipeline/types.js';
import type { AdmissionConfig } from '../config/schema.js';
import { sendError } from '../response/send-error.js';
import { admissionKey, type AdmissionCount, type AdmissionCounts } from './admission-counts.js';

/** One limit: the count it reads and the most requests it lets through at once. */
export interface InFlightLimit {
  readonly count: AdmissionCount;
  readonly max: number;
}

export interface AdmissionOptions {
  /** The gateway's limit; undefined: none. */
  readonly gateway: InFlightLimit | undefined;
  /** The route's own limit; undefined: none. */
  readonly route: InFlightLimit | undefined;
  /** Whole seconds, sent as `Retry-After` with every refusal. */
  readonly retryAfterSec: number;
  /** An SSE route: the slots are released once the stream's head is sent. */
  readonly releaseOnResponseStart: boolean;
}

/** A route's limits on requests in flight; undefined when neither it nor the gateway has one. */
export function routeAdmission(
  route: CompiledRoute,
  settings: AdmissionConfig,
  counts: AdmissionCounts,
): AdmissionOptions | undefined {
  const { maxInFlight, retryAfterSec } = settings;
  if (maxInFlight === undefined && route.maxInFlight === undefined) return undefined;
  return {
    gateway: maxInFlight === undefined ? undefined : { count: counts.gateway, max: maxInFlight },
    route:
      route.maxInFlight === undefined
        ? undefined
        : { count: counts.route(admissionKey(route)), max: route.maxInFlight },
    retryAfterSec,
    // An open stream holds no request slot; a WebSocket handshake's endpoint resolves at the 101.
    releaseOnResponseStart: route.kind === 'sse',
  };
}

/** A limit that never refuses, for the side (gateway or route) that has none. */
const unlimited = (): InFlightLimit => ({ count: { inFlight: 0, refused: 0 }, max: Infinity });

/** Refuses requests past the route's or the gateway's limit on requests in flight. */
export function admissionLayer(options: AdmissionOptions): Layer {
  const route = options.route ?? unlimited();
  const gateway = options.gateway ?? unlimited();
  const refusal = { 'retry-after': options.retryAfterSec };
  const early = options.releaseOnResponseStart;
  return (next) => async (ex) => {
    // The route's own limit first: a full route is refused without reading the gateway's count.
    if (route.count.inFlight >= route.max) return refuse(ex, route.count, refusal);
    if (gateway.count.inFlight >= gateway.max) return refuse(ex, gateway.count, refusal);
    route.count.inFlight++;
    gateway.count.inFlight++;
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      route.count.inFlight--;
      gateway.count.inFlight--;
    };
    if (early) ex.onResponseStart = release;
    try {
      await next(ex);
    } finally {
      // Also when next throws: a slot never released would lower the limit for good.
      release();
    }
  };
}

function refuse(ex: Exchange, count: AdmissionCount, headers: { 'retry-after': number }): void {
  count.refused++;
  ex.errorCode = 'GW_OVERLOADED';
  ex.req.resume();
  sendError(ex.res, 'GW_OVERLOADED', headers);
}
