/**
 * How a call uses an upstream's pools: which pool (target) an attempt goes out on, the count of
 * calls in flight on it, the target's passive health, and whether a failed attempt may go again
 * to another target. Every outbound call of the gateway books its attempts here, whatever made
 * it, so that a full pool is seen as full and a failing target is seen as failing.
 */
import type { EventBus } from '../../observability/events.js';
import type { BackendPool, Upstream } from '../types.js';
import { classifyUpstreamError, type UpstreamFailureKind } from '../upstream-error.js';

/**
 * Takes the pool one call goes out on and counts the call on it: every call on an upstream's
 * pools, whatever made it, so that a full pool is seen as full. End it with `callEnded`.
 */
export function callStarted(upstream: Upstream, streaming = false, avoid?: BackendPool, grpc = false): BackendPool {
  const pool = grpc ? upstream.pickForGrpc(avoid) : streaming ? upstream.pickForStream(avoid) : upstream.pick(avoid);
  pool.inFlight++;
  return pool;
}

/** An answer that says this target cannot serve the call now: another target may. */
export function retryableStatus(status: number): boolean {
  return status === 502 || status === 503;
}

/** A failure before any answer that another target may not have: its kind, else undefined. */
export function retryableFailure(err: unknown): UpstreamFailureKind | undefined {
  const kind = classifyUpstreamError(err).kind;
  return kind === 'refused' || kind === 'reset' || kind === 'dns' ? kind : undefined;
}

/** Reports that a call of `routeId` goes again, away from the target `failed` ('upstream:retry'). */
export function reportRetry(
  events: EventBus,
  at: { readonly requestId: string; readonly routeId: string; readonly upstream: Upstream },
  failed: BackendPool,
  reason: string,
): void {
  events.emit('upstream:retry', {
    requestId: at.requestId,
    routeId: at.routeId,
    origin: at.upstream.origin.key,
    target: failed.origin.key,
    reason,
  });
}
