/**
 * The hot path reports what happened as events; logs and metrics subscribe. A minimal typed bus:
 * emitting with no listener costs one array length check.
 */
import type { TraceContext } from './trace-context.js';

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
    state: 'ejected' | 'restored' | 'unhealthy' | 'healthy';
    ejectedForMs?: number;
  };
  /** A failed attempt of a backend call is sent again to another target of a named upstream. */
  'upstream:retry': { requestId: string; routeId: string; origin: string; target: string; reason: string };
  'auth:result': { requestId: string; routeId: string; outcome: string; detail?: string };
  'config:reload': { file: string; ok: boolean; problems?: string[] };
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
  /** A Redis command answered (docs/redis.md): `durationMs` is the round trip. */
  'redis:response': { use: RedisUse; durationMs: number };
  /** A Redis command failed or timed out (`kind`: timeout, connection, reply). */
  'redis:error': { use: RedisUse; kind: string };
  /** A decision made without Redis while it is down or slow: local buckets, or no shared cache. */
  'redis:fallback': { use: RedisUse };
}

/** Which kind of outgoing call an 'upstream:response' reports. */
export type UpstreamCall = 'backend' | 'mapping' | 'auth' | 'websocket';
export type StreamKind = 'sse' | 'websocket';
/** What a Redis command was for. */
export type RedisUse = 'rate-limit' | 'mapping-cache';

type Listener<K extends keyof GatewayEvents> = (event: GatewayEvents[K]) => void;

export interface EventBus {
  on<K extends keyof GatewayEvents>(name: K, listener: Listener<K>): () => void;
  emit<K extends keyof GatewayEvents>(name: K, event: GatewayEvents[K]): void;
  has(name: keyof GatewayEvents): boolean;
}

export function createEventBus(): EventBus {
  const listeners: { [K in keyof GatewayEvents]?: Listener<K>[] } = {};
  return {
    on(name, listener) {
      const list = (listeners[name] ??= []) as Listener<typeof name>[];
      list.push(listener);
      return () => {
        const i = list.indexOf(listener);
        if (i >= 0) list.splice(i, 1);
      };
    },
    emit(name, event) {
      const list = listeners[name];
      if (list === undefined) return;
      for (let i = 0; i < list.length; i++) (list[i] as Listener<typeof name>)(event);
    },
    has(name) {
      return (listeners[name]?.length ?? 0) > 0;
    },
  };
}
