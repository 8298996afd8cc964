/**
 * The contracts of observability/: the events the hot path emits and the bus they travel on, and
 * a request's trace context, and the logger's type. Types only, so any module can import it.
 */

export type { Logger } from 'pino';

/** A child span: one outgoing call, recorded only while an exporter is active. */
export interface ChildSpan {
  readonly spanId: string;
  /** performance.now() when the call was prepared; the exporter refines start and end. */
  start: number;
  end: number | undefined;
  status: number | undefined;
  error: string | undefined;
  name: string | undefined;
  /** The call's full URL (`url.full`). */
  origin: string | undefined;
  method: string | undefined;
  /** Host and port of the callee (`server.address`, `server.port`). */
  address: string | undefined;
  port: number | undefined;
}

export interface TraceContext {
  readonly traceId: string;
  /** The client's span id; undefined when the trace started here. */
  readonly parentId: string | undefined;
  /** The gateway's own (server) span id; '' when not recording. */
  readonly spanId: string;
  readonly sampled: boolean;
  readonly tracestate: string | undefined;
  /** Outgoing calls, kept only when the trace is sampled and an exporter records. */
  readonly children: ChildSpan[] | undefined;
  /** The client's Host header (`server.address` of the server span), kept only while recording. */
  readonly host?: string | undefined;
}

export interface GatewayEvents {
  'request:end': {
    requestId: string;
    method: string;
    routeId: string | undefined;
    path: string;
    status: number;
    durationMs: number;
    aborted: boolean;
    errorCode?: string | undefined;
    /** The request's trace, only while spans are exported (telemetry.otlpEndpoint). */
    trace?: TraceContext | undefined;
  };
  'upstream:error': { requestId: string; routeId: string; origin: string; kind: string; error: unknown };
  /**
   * The client left before its answer ended, and the backend call made for it was cut: the
   * client's outcome, never an upstream error or a circuit failure ('request:end' counts it as
   * aborted).
   */
  'client:closed': { requestId: string; routeId: string; origin: string };
  'circuit:change': { origin: string; from: string; to: string; consecutiveFailures: number };
  /**
   * A mapping rule left items of one response without its tag: one event per response and rule,
   * however many items and calls failed. `url` and `reason` are the first failed call's; `reasons`
   * counts the failed calls by reason when they differ.
   */
  'mapping:fail': {
    requestId: string;
    routeId: string;
    tag: string;
    url: string;
    reason: string;
    items: number;
    calls: number;
    reasons?: Readonly<Record<string, number>> | undefined;
  };
  /**
   * An aggregated route answered without some of its backends' answers (200, `X-Portico-Completed:
   * false`), or without any (502): which backends failed, and why.
   */
  'aggregate:incomplete': {
    requestId: string;
    routeId: string;
    total: number;
    failed: readonly { readonly backend: number; readonly service: string; readonly reason: string }[];
  };
  /**
   * A named upstream's target was ejected after failing in a row, or is back in service; or the
   * active health checks found it unhealthy, or healthy again.
   */
  'upstream:target': {
    upstream: string;
    target: string;
    state: 'failing' | 'recovered' | 'ejected' | 'restored' | 'unhealthy' | 'healthy';
    ejectedForMs?: number;
  };
  /** A failed attempt of a backend call is sent again to another target of a named upstream. */
  'upstream:retry': { requestId: string; routeId: string; origin: string; target: string; reason: string };
  'auth:result': { requestId: string; routeId: string; outcome: string; detail?: string };
  'config:reload': { file: string; ok: boolean; problems?: string[] };
  /** A plugin's stage ran on a request (src/layers/plugin.ts): its name, the stage, how long it took. */
  'plugin:run': { routeId: string; plugin: string; stage: string; durationMs: number };
  /** A plugin's stage threw, rejected or returned nothing valid ('failed'), or ran past its timeoutMs ('timeout'). */
  'plugin:error': { requestId: string; routeId: string; plugin: string; stage: string; kind: 'failed' | 'timeout' };
  /**
   * A backend, mapping, auth-service or WebSocket call got its response head (status and
   * headers): `durationMs` is the upstream latency seen by the gateway. Calls with no answer are
   * 'upstream:error' instead.
   */
  'upstream:response': { routeId: string; origin: string; call: UpstreamCall; status: number; durationMs: number };
  /** An SSE response started streaming, or a WebSocket tunnel opened (after the 101). */
  'stream:open': { kind: StreamKind; routeId: string };
  /** That stream or tunnel closed, whichever side closed it. Exactly once per 'stream:open'. */
  'stream:close': { kind: StreamKind; routeId: string; durationMs: number };
  /**
   * A request body was refused before it spilled to a temporary file: its client (`client`, the
   * rate-limit key) or the whole process (`total`) already held too many bytes there
   * (`limits.spillMaxBytesPerClient`, `limits.spillMaxBytes`). `bytes` is what the body asked for,
   * `clientBytes` and `totalBytes` what was held when it asked.
   */
  'body:spill-refused': {
    requestId: string;
    routeId: string;
    client: string;
    limit: 'client' | 'total';
    bytes: number;
    clientBytes: number;
    totalBytes: number;
  };
  /**
   * The HTTP cache of a route answered (docs/caching.md), once per request: `hit` from the store,
   * `stale` a stale entry served (stale-if-error, stale-while-revalidate) or replaced by the
   * backend's answer, `revalidated` a stale entry the backend's 304 refreshed, `miss` nothing stored.
   */
  'cache:lookup': { routeId: string; result: 'hit' | 'stale' | 'miss' | 'revalidated' };
  /** A Redis command answered (docs/redis.md): `durationMs` is the round trip. */
  'redis:response': { use: RedisUse; durationMs: number };
  /** A Redis command failed or timed out (`kind`: timeout, connection, reply). */
  'redis:error': { use: RedisUse; kind: string };
  /** A decision made without Redis while it is down or slow: local buckets, or no shared cache. */
  'redis:fallback': { use: RedisUse };
  /** A request of a split route went to one of its arms (`arm`: the arm's service or upstream as written). */
  'split:choice': { routeId: string; arm: string };
  /**
   * A copy of a request sent to the route's mirror ended: answered (any status; the answer is
   * discarded) or failed (no answer: refused, reset, or still unanswered at `mirror.timeoutSec`).
   */
  'mirror:end': { routeId: string; outcome: 'answered' | 'failed'; status?: number | undefined; durationMs: number };
  /** A request picked for mirroring was not copied: no free slot, or a body past the limit or cut short. */
  'mirror:dropped': { routeId: string; reason: MirrorDropReason };
}

/** Why a copy for the mirror was not sent. */
export type MirrorDropReason = 'in-flight-limit' | 'body-too-large' | 'body-incomplete';

/** Which kind of outgoing call an 'upstream:response' reports. */
export type UpstreamCall = 'backend' | 'mapping' | 'auth' | 'websocket';
export type StreamKind = 'sse' | 'websocket';
/** What a Redis command was for. */
export type RedisUse = 'rate-limit' | 'mapping-cache' | 'quota' | 'http-cache';

/** A subscriber to the event `K`. */
export type Listener<K extends keyof GatewayEvents> = (event: GatewayEvents[K]) => void;

export interface EventBus {
  on<K extends keyof GatewayEvents>(name: K, listener: Listener<K>): () => void;
  emit<K extends keyof GatewayEvents>(name: K, event: GatewayEvents[K]): void;
  has(name: keyof GatewayEvents): boolean;
}
