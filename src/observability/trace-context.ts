/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the gateway continues the client's
 * trace (a valid `traceparent`) or starts one, and every outgoing call (backend, mapping call,
 * auth service, WebSocket upgrade) gets its own child span id, so that each backend span hangs
 * under the call that caused it. `tracestate` is passed on unchanged with a valid `traceparent`
 * and dropped with an invalid one (W3C Trace Context, section 3.3).
 *
 * Cost: nothing until a call is made. The context is kept on the client request
 * (`IncomingMessage`) under a symbol, which every caller has (auth gets `req`, forward and mapping
 * get `ex.req`): a symbol property is far cheaper than a WeakMap entry (docs/performance.md). Ids
 * come from a pooled random buffer (random-ids.ts: no crypto call per request).
 *
 * Sampling and recording belong to a tracer, one per gateway (created by gateway.ts, set from
 * `config.telemetry` at load and reload), so that two gateways in one process keep their own.
 * The request entry binds each client request to its gateway's tracer; the call sites then only
 * need the request. A request bound to no tracer is traced, sampled, and never recorded.
 */
import type { IncomingMessage } from 'node:http';
import { randomHex } from './random-ids.js';
import type { ChildSpan, TraceContext } from './types.js';

export type { ChildSpan, TraceContext };

/** What an exporter needs from this module. */
export interface SpanRecorder {
  /** A child span was created for a call (its id is in the outgoing `traceparent`). */
  childStarted(span: ChildSpan): void;
}

/** One gateway's tracing settings. */
export interface Tracer {
  /** The share of gateway-started traces marked sampled (`telemetry.sampleRatio`). */
  configure(options: { readonly sampleRatio: number }): void;
  /** Installs (or removes, with undefined) the exporter that records spans. */
  setRecorder(recorder: SpanRecorder | undefined): void;
  /** True while an exporter records spans (the request entry then reports server spans). */
  isRecording(): boolean;
  /** Makes `req`'s trace context, on first use, by this tracer's settings. */
  bind(req: IncomingMessage): void;
}

interface TracerState {
  sampleRatio: number;
  recorder: SpanRecorder | undefined;
}

const TRACE = Symbol('portico.trace');
const TRACER = Symbol('portico.tracer');
type Traced = IncomingMessage & { [TRACE]?: TraceContext; [TRACER]?: TracerState };

/** What a request bound to no tracer gets: sampled, never recorded. Never changed. */
const UNBOUND: Readonly<TracerState> = Object.freeze({ sampleRatio: 1, recorder: undefined });

/** A tracer for one gateway: everything sampled, nothing recorded until an exporter is set. */
export function createTracer(options: { readonly sampleRatio?: number } = {}): Tracer {
  const state: TracerState = { sampleRatio: options.sampleRatio ?? 1, recorder: undefined };
  return {
    configure({ sampleRatio }) {
      state.sampleRatio = sampleRatio;
    },
    setRecorder(recorder) {
      state.recorder = recorder;
    },
    isRecording: () => state.recorder !== undefined,
    bind(req) {
      (req as Traced)[TRACER] = state;
    },
  };
}

function tracerOf(req: IncomingMessage): Readonly<TracerState> {
  return (req as Traced)[TRACER] ?? UNBOUND;
}

const ZERO_SPAN = '0000000000000000';
const ZERO_TRACE = '00000000000000000000000000000000';

/** A new 16-hex span id (never all zeros, W3C Trace Context 3.2.2.4). */
export function newSpanId(): string {
  let id = randomHex(8);
  while (id === ZERO_SPAN) id = randomHex(8);
  return id;
}

/** A new 32-hex trace id (never all zeros, W3C Trace Context 3.2.2.3). */
export function newTraceId(): string {
  let id = randomHex(16);
  while (id === ZERO_TRACE) id = randomHex(16);
  return id;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** Parses a `traceparent` header; undefined when invalid (then a new trace starts). */
export function parseTraceparent(
  value: string | string[] | undefined,
): { traceId: string; parentId: string; sampled: boolean } | undefined {
  if (typeof value !== 'string' || value.length < 55) return undefined;
  const m = TRACEPARENT.exec(value);
  if (m === null) return undefined;
  const [, version, traceId, parentId, flags, rest] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string | undefined,
  ];
  // Version ff is invalid; version 00 has exactly four fields; later versions may add fields.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return undefined;
  return { traceId, parentId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

function createContext(req: IncomingMessage): TraceContext {
  const { sampleRatio, recorder } = tracerOf(req);
  const parsed = parseTraceparent(req.headers.traceparent);
  const sampled = parsed === undefined ? sampleRatio >= 1 || Math.random() < sampleRatio : parsed.sampled;
  const recording = recorder !== undefined && sampled;
  const raw = parsed === undefined ? undefined : req.headers.tracestate;
  const state = Array.isArray(raw) ? raw.join(',') : raw;
  return {
    traceId: parsed?.traceId ?? newTraceId(),
    parentId: parsed?.parentId,
    spanId: recording ? newSpanId() : '',
    sampled,
    tracestate: state === undefined || state === '' ? undefined : state,
    children: recording ? [] : undefined,
    host: recording ? req.headers.host : undefined,
  };
}

/** The trace of a client request, made on first use. */
export function traceOf(req: IncomingMessage): TraceContext {
  return ((req as Traced)[TRACE] ??= createContext(req));
}

/** The trace of a request if one was made (for the server span at request end). */
export function peekTrace(req: IncomingMessage): TraceContext | undefined {
  return (req as Traced)[TRACE];
}

/**
 * The `traceparent` for one outgoing call made on behalf of `req`: same trace, new span id.
 * @example headers.traceparent = childTraceparent(ex.req)
 */
export function childTraceparent(req: IncomingMessage): string {
  return childOf(req, traceOf(req));
}

function childOf(req: IncomingMessage, ctx: TraceContext): string {
  const spanId = newSpanId();
  const { recorder } = tracerOf(req);
  if (ctx.children !== undefined && recorder !== undefined) {
    const span: ChildSpan = {
      spanId,
      start: performance.now(),
      end: undefined,
      status: undefined,
      error: undefined,
      name: undefined,
      origin: undefined,
      method: undefined,
      address: undefined,
      port: undefined,
    };
    ctx.children.push(span);
    recorder.childStarted(span);
  }
  return `00-${ctx.traceId}-${spanId}-${ctx.sampled ? '01' : '00'}`;
}

/**
 * Trace headers for one outgoing call, as a flat `[name, value, ...]` list: `traceparent`, and
 * `tracestate` when the client sent one with a valid `traceparent`.
 * @example pool.request({ headers: [...base, ...traceHeaders(ex.req)] })
 */
export function traceHeaders(req: IncomingMessage): string[] {
  const out: string[] = [];
  appendTraceHeaders(req, out);
  return out;
}

/** The same, pushed onto a flat header list being built (the proxy's hot path). */
export function appendTraceHeaders(req: IncomingMessage, out: string[]): void {
  const ctx = traceOf(req);
  out.push('traceparent', childOf(req, ctx));
  if (ctx.tracestate !== undefined) out.push('tracestate', ctx.tracestate);
}

/** Client headers a propagating gateway replaces (forward-headers drops them, then adds its own). */
export const TRACE_HEADERS = ['traceparent', 'tracestate'] as const;
