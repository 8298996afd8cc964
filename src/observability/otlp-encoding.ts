/**
 * Spans in the OTLP/HTTP JSON encoding (the protobuf messages of `ExportTraceServiceRequest` as
 * JSON: ids in hex, times as decimal strings of nanoseconds, 64-bit integers as strings), with
 * attributes named by the OpenTelemetry HTTP semantic conventions. Pure functions: no clock
 * reads beyond the times passed in, no I/O.
 */
import type { GatewayEvents } from './events.js';
import type { ChildSpan, TraceContext } from './trace-context.js';

export type AttributeValue = { stringValue: string } | { intValue: string };
export interface Attribute {
  readonly key: string;
  readonly value: AttributeValue;
}

export interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly attributes: readonly Attribute[];
  readonly status: { readonly code: number; readonly message?: string };
}

export interface OtlpResource {
  readonly attributes: readonly Attribute[];
}

export const SPAN_KIND_SERVER = 2;
export const SPAN_KIND_CLIENT = 3;
export const STATUS_UNSET = 0;
export const STATUS_ERROR = 2;

/** `performance.now()` milliseconds to OTLP's nanoseconds since the epoch (microsecond precision). */
export function epochNanos(perfMs: number): string {
  return (BigInt(Math.round((performance.timeOrigin + perfMs) * 1000)) * 1000n).toString();
}

/** Host and port of an origin (`http://host:port`), the port defaulted by the scheme. */
export function originAddress(origin: string): { address: string; port: number } {
  const https = origin.startsWith('https:');
  const authority = origin.slice(origin.indexOf('//') + 2);
  const colon = authority.lastIndexOf(':');
  // An IPv6 literal's colons sit inside brackets: only a colon after the ']' starts the port.
  if (colon > authority.lastIndexOf(']'))
    return { address: authority.slice(0, colon), port: Number(authority.slice(colon + 1)) };
  return { address: authority, port: https ? 443 : 80 };
}

const str = (key: string, value: string): Attribute => ({ key, value: { stringValue: value } });
const int = (key: string, value: number): Attribute => ({ key, value: { intValue: String(value) } });

/** The resource of every exported span: `service.name`, the extra attributes, and who encoded it. */
export function otlpResource(serviceName: string, extra: readonly (readonly [string, string])[] = []): OtlpResource {
  return {
    attributes: [
      str('service.name', serviceName),
      ...extra.map(([k, v]) => str(k, v)),
      str('telemetry.sdk.name', 'portico'),
    ],
  };
}

/**
 * The gateway's SERVER span of one request, from `start` to `end` (performance.now() ms); its
 * parent is the client's span when the client sent a `traceparent`.
 */
export function serverSpan(e: GatewayEvents['request:end'], trace: TraceContext, start: number, end: number): OtlpSpan {
  return {
    traceId: trace.traceId,
    spanId: trace.spanId,
    ...(trace.parentId === undefined ? {} : { parentSpanId: trace.parentId }),
    name: e.routeId ?? `${e.method} unmatched`,
    kind: SPAN_KIND_SERVER,
    startTimeUnixNano: epochNanos(start),
    endTimeUnixNano: epochNanos(end),
    attributes: [
      str('http.request.method', e.method),
      ...(e.routeId === undefined ? [] : [str('http.route', e.routeId.slice(e.routeId.indexOf(' ') + 1))]),
      str('url.path', e.path),
      str('url.scheme', 'http'),
      ...serverAttributes(trace.host),
      int('http.response.status_code', e.status),
      str('portico.request_id', e.requestId),
      // A failure names its type: the gateway's error code, else the 5xx status itself.
      ...(e.errorCode !== undefined
        ? [str('error.type', e.errorCode)]
        : e.status >= 500
          ? [str('error.type', String(e.status))]
          : []),
    ],
    status: e.status >= 500 ? { code: STATUS_ERROR } : { code: STATUS_UNSET },
  };
}

/** `server.address` and `server.port` from the request's Host header (the name the client used). */
function serverAttributes(host: string | undefined): Attribute[] {
  if (host === undefined || host === '') return [];
  const { address, port } = originAddress(`http://${host}`);
  return Number.isInteger(port)
    ? [str('server.address', address), int('server.port', port)]
    : [str('server.address', address)];
}

/** The CLIENT span of one outgoing call under the server span; a call still running ends at `end`. */
export function clientSpan(child: ChildSpan, trace: TraceContext, end: number): OtlpSpan {
  const failed = child.error !== undefined || (child.status ?? 0) >= 500;
  return {
    traceId: trace.traceId,
    spanId: child.spanId,
    parentSpanId: trace.spanId,
    name: child.name ?? 'call',
    kind: SPAN_KIND_CLIENT,
    startTimeUnixNano: epochNanos(child.start),
    endTimeUnixNano: epochNanos(child.end ?? end),
    attributes: [
      ...(child.method === undefined ? [] : [str('http.request.method', child.method)]),
      ...(child.origin === undefined ? [] : [str('url.full', child.origin)]),
      ...(child.address === undefined ? [] : [str('server.address', child.address)]),
      ...(child.port === undefined ? [] : [int('server.port', child.port)]),
      ...(child.status === undefined ? [] : [int('http.response.status_code', child.status)]),
      ...(child.error !== undefined
        ? [str('error.type', child.error)]
        : failed
          ? [str('error.type', String(child.status))]
          : []),
    ],
    status: failed
      ? { code: STATUS_ERROR, ...(child.error === undefined ? {} : { message: child.error }) }
      : { code: STATUS_UNSET },
  };
}

/** The body of one export request (`POST /v1/traces`, `content-type: application/json`). */
export function encodeExportRequest(resource: OtlpResource, spans: readonly OtlpSpan[]): string {
  return JSON.stringify({ resourceSpans: [{ resource, scopeSpans: [{ scope: { name: 'portico' }, spans }] }] });
}
