/**
 * The contract of a backend pool, shared by the registry (upstream.ts), the target sets
 * (targets.ts) and every call (call/pool-use.ts), and what upstream/ compiles for a route (URL
 * builders, header rules). Types only, so any module can import it.
 */
import type { Pool } from 'undici';
import type { Origin } from '../config/types.js';
import type { CircuitBreaker } from '../circuit/types.js';

/** Why a backend call got no answer (upstream/upstream-error.ts classifies it). */
export type UpstreamFailureKind = 'timeout' | 'dns' | 'refused' | 'reset' | 'aborted' | 'other';

/** Fills a path template with encoded values (upstream/target-url.ts). */
export type UrlBuilder = (values: Readonly<Record<string, string>>) => string;

/** A header value template: literal text and placeholders, alternating as written. */
export type HeaderValuePart = { readonly text: string } | { readonly param: string } | { readonly claim: string };

/** One side of a route's header rules, compiled (upstream/headers/header-edits.ts). */
export interface CompiledHeaderEdit {
  /** Lower-case names removed (the names `set` replaces are in it too). */
  readonly remove: ReadonlySet<string>;
  readonly set: readonly (readonly [name: string, value: readonly HeaderValuePart[]])[];
}

/**
 * What a pool carries: `pooled` calls (bounded keep-alive connections), `stream`s (unbounded,
 * long-lived), or `grpc` calls (HTTP/2 only, many streams per connection).
 */
export type PoolUse = 'pooled' | 'stream' | 'grpc';

/** Where a call's outcome is recorded: a named upstream's target health (targets.ts). */
export interface CallRecorder {
  /** One call's outcome: failed is no answer, or a 5xx. */
  record(failed: boolean): void;
}

/**
 * A pool of connections to a backend, and the calls on it right now. Every call the gateway makes
 * on it counts itself (upstream/call/backend-call.ts), whichever endpoint makes it: the count is how a
 * call knows it will wait in undici's queue, and what a choice between pools would compare.
 */
export interface BackendPool {
  readonly dispatcher: Pool;
  /** Calls dispatched on `dispatcher` that have not ended: proxied, streamed, enrichment and mapping calls. */
  inFlight: number;
  /** The most connections `dispatcher` opens (Infinity when unlimited). */
  readonly connections: number;
  /** The backend this pool connects to (a target's own origin for a named upstream). */
  readonly origin: Origin;
  /** A named upstream's target: each call's outcome is recorded (targets.ts); undefined otherwise. */
  readonly health?: CallRecorder | undefined;
}

/** What the active health checks read and write of a target (health-check.ts, targets.ts). */
export interface CheckedTarget {
  readonly pool: BackendPool;
  readonly health: { down: boolean; checkPasses: number; checkFailures: number };
}

/** What a call takes from a named upstream's retry budget (retry-budget.ts). */
export interface CallBudget {
  /** Counts a first attempt. */
  call(): void;
  /** Takes one retry from the budget; false when it is spent. */
  tryRetry(): boolean;
}

/** What reaches an origin's Upstream (the registry, upstream.ts). */
export interface UpstreamSource {
  forOrigin(origin: Origin): Upstream;
}

export interface Upstream {
  readonly origin: Origin;
  readonly breaker: CircuitBreaker;
  /**
   * The pool a standard, enrichment, mapping or auth call goes out on, asked for per call so the
   * choice can depend on the moment: a plain service has one pool (bounded keep-alive
   * connections), a named upstream one per target. `avoid`: a target that just failed the call
   * (a retry goes to another one when there is one).
   */
  pick(avoid?: BackendPool): BackendPool;
  /**
   * The pool an SSE stream goes out on: unlimited connections, made on first use. Long-lived
   * streams must never take the pooled connections standard and mapping calls wait for.
   */
  pickForStream(avoid?: BackendPool): BackendPool;
  /**
   * The pool a gRPC call goes out on: HTTP/2 connections (h2c to an http:// backend, ALPN h2 to
   * an https:// one), made on first use, each carrying many calls at once (upstream/pools.ts).
   */
  pickForGrpc(avoid?: BackendPool): BackendPool;
  /** A named upstream with several targets: the budget its retries take from; undefined: no retries. */
  readonly retryBudget: CallBudget | undefined;
  /** TLS options of an https:// origin for connections made outside undici (WebSocket tunnels). */
  readonly tlsConnect: TlsConnectOptions | undefined;
}

export interface TlsConnectOptions {
  readonly ca?: string[];
  readonly rejectUnauthorized: boolean;
  /** The client certificate (PEM, leaf first) and its key, for backends that ask for one (mTLS). */
  readonly cert?: Buffer;
  readonly key?: Buffer;
  /** SNI and certificate name when the target is an address resolved from a host name. */
  readonly servername?: string;
}

/** The JSON text of a call's answer, or why there is none (upstream/call/json-call.ts). */
export type JsonOutcome =
  { readonly ok: true; readonly json: string } | { readonly ok: false; readonly reason: string };
