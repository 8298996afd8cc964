import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { GatewayEvents } from './events.js';
import type { ChildSpan, TraceContext } from './trace-context.js';
import { tracesUrl } from '../config/otel-env.js';
import {
  clientSpan,
  encodeExportRequest,
  epochNanos,
  originAddress,
  otlpResource,
  serverSpan,
  SPAN_KIND_CLIENT,
  SPAN_KIND_SERVER,
} from './otlp-encoding.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const SERVER = 'b7ad6b7169203331';
const CHILD = '53995c3f42cd8ad8';

function trace(over: Partial<TraceContext> = {}): TraceContext {
  return {
    traceId: TRACE,
    parentId: PARENT,
    spanId: SERVER,
    sampled: true,
    tracestate: undefined,
    children: [],
    host: 'api.example.com:8443',
    ...over,
  };
}

function end(over: Partial<GatewayEvents['request:end']> = {}): GatewayEvents['request:end'] {
  return {
    requestId: 'r-1',
    method: 'GET',
    routeId: 'GET /users/{id}',
    path: '/api/users/7',
    status: 200,
    durationMs: 3,
    aborted: false,
    ...over,
  };
}

function child(over: Partial<ChildSpan> = {}): ChildSpan {
  return {
    spanId: CHILD,
    start: 1,
    end: 2,
    status: 200,
    error: undefined,
    name: 'GET users:3000',
    origin: 'http://users:3000/users/7',
    method: 'GET',
    address: 'users',
    port: 3000,
    ...over,
  };
}

type Attrs = Record<string, string | number>;
/** Attributes as a plain object, checking each value has exactly one OTLP value kind. */
function attrs(list: readonly { key: string; value: Record<string, string> }[]): Attrs {
  const out: Attrs = {};
  for (const { key, value } of list) {
    const kinds = Object.keys(value);
    assert.equal(kinds.length, 1, key);
    if (kinds[0] === 'intValue') {
      assert.match(value.intValue!, /^-?\d+$/, `${key}: an OTLP JSON int64 is a decimal string`);
      out[key] = Number(value.intValue);
    } else {
      assert.equal(kinds[0], 'stringValue', key);
      out[key] = value.stringValue!;
    }
  }
  return out;
}

describe('OTLP/HTTP JSON encoding', () => {
  it('wraps spans in resourceSpans > scopeSpans with the resource attributes', () => {
    const body = JSON.parse(
      encodeExportRequest(otlpResource('edge', [['deployment.environment', 'prod']]), [
        serverSpan(end(), trace(), 10, 13),
      ]),
    ) as {
      resourceSpans: {
        resource: { attributes: { key: string; value: Record<string, string> }[] };
        scopeSpans: { scope: { name: string }; spans: unknown[] }[];
      }[];
    };
    assert.equal(body.resourceSpans.length, 1);
    const [rs] = body.resourceSpans;
    assert.deepEqual(attrs(rs!.resource.attributes), {
      'service.name': 'edge',
      'deployment.environment': 'prod',
      'telemetry.sdk.name': 'portico',
    });
    assert.equal(rs!.scopeSpans[0]!.scope.name, 'portico');
    assert.equal(rs!.scopeSpans[0]!.spans.length, 1);
  });

  it('writes a SERVER span by the HTTP server semantic conventions', () => {
    const span = serverSpan(end(), trace(), 10, 13);
    assert.equal(span.traceId, TRACE);
    assert.equal(span.spanId, SERVER);
    assert.equal(span.parentSpanId, PARENT);
    assert.equal(span.kind, SPAN_KIND_SERVER);
    assert.equal(span.name, 'GET /users/{id}');
    assert.match(span.startTimeUnixNano, /^\d{19}$/);
    assert.equal(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano), 3_000_000n);
    assert.deepEqual(attrs(span.attributes), {
      'http.request.method': 'GET',
      'http.route': '/users/{id}',
      'url.path': '/api/users/7',
      'url.scheme': 'http',
      'server.address': 'api.example.com',
      'server.port': 8443,
      'http.response.status_code': 200,
      'portico.request_id': 'r-1',
    });
    assert.deepEqual(span.status, { code: 0 });
  });

  it('names a failed request by error.type and marks it an error', () => {
    const refused = serverSpan(end({ status: 503, errorCode: 'GW_CIRCUIT_OPEN' }), trace(), 0, 1);
    assert.equal(attrs(refused.attributes)['error.type'], 'GW_CIRCUIT_OPEN');
    assert.deepEqual(refused.status, { code: 2 });
    const failed = serverSpan(end({ status: 500 }), trace(), 0, 1);
    assert.equal(attrs(failed.attributes)['error.type'], '500');
  });

  it('omits what it does not know: no route, no parent, no Host; the default port by scheme', () => {
    const span = serverSpan(
      end({ routeId: undefined, status: 404 }),
      trace({ parentId: undefined, host: undefined }),
      0,
      1,
    );
    assert.equal(span.parentSpanId, undefined);
    assert.equal(span.name, 'GET unmatched');
    const a = attrs(span.attributes);
    assert.equal('http.route' in a || 'server.address' in a || 'error.type' in a, false);
    assert.deepEqual(attrs(serverSpan(end(), trace({ host: 'api.example.com' }), 0, 1).attributes)['server.port'], 80);
  });

  it('writes a CLIENT span per call with url.full and the callee address', () => {
    const span = clientSpan(child(), trace(), 5);
    assert.equal(span.kind, SPAN_KIND_CLIENT);
    assert.equal(span.parentSpanId, SERVER);
    assert.equal(span.spanId, CHILD);
    assert.deepEqual(attrs(span.attributes), {
      'http.request.method': 'GET',
      'url.full': 'http://users:3000/users/7',
      'server.address': 'users',
      'server.port': 3000,
      'http.response.status_code': 200,
    });
    assert.deepEqual(span.status, { code: 0 });
  });

  it('names a failed call by error.type, and ends a call still running with the request', () => {
    const refused = clientSpan(child({ status: undefined, error: 'ECONNREFUSED', end: undefined }), trace(), 9);
    assert.equal(attrs(refused.attributes)['error.type'], 'ECONNREFUSED');
    assert.deepEqual(refused.status, { code: 2, message: 'ECONNREFUSED' });
    assert.equal(refused.endTimeUnixNano, epochNanos(9));
    assert.equal(attrs(clientSpan(child({ status: 502 }), trace(), 9).attributes)['error.type'], '502');
  });
});

describe('OTLP helpers', () => {
  it('reads server.address and server.port from an origin', () => {
    assert.deepEqual(originAddress('http://10.0.0.1:8080'), { address: '10.0.0.1', port: 8080 });
    assert.deepEqual(originAddress('https://api.example.com'), { address: 'api.example.com', port: 443 });
    assert.deepEqual(originAddress('http://[::1]'), { address: '[::1]', port: 80 });
    assert.deepEqual(originAddress('http://[::1]:9000'), { address: '[::1]', port: 9000 });
  });

  it('appends /v1/traces to a collector base URL once', () => {
    assert.equal(tracesUrl('http://collector:4318'), 'http://collector:4318/v1/traces');
    assert.equal(tracesUrl('http://collector:4318/'), 'http://collector:4318/v1/traces');
    assert.equal(tracesUrl('https://otel.example.com/v1/traces'), 'https://otel.example.com/v1/traces');
  });

  it('turns performance.now() into nanoseconds since the epoch', () => {
    const before = BigInt(Date.now()) * 1_000_000n;
    const ns = BigInt(epochNanos(performance.now()));
    const after = BigInt(Date.now()) * 1_000_000n;
    assert.ok(ns >= before - 5_000_000n && ns <= after + 5_000_000n);
    assert.equal(epochNanos(performance.now()).length, 19);
  });

  it('reads host and port of an origin, IPv6 included', () => {
    assert.deepEqual(originAddress('https://a.example'), { address: 'a.example', port: 443 });
    assert.deepEqual(originAddress('http://[::1]:8080'), { address: '[::1]', port: 8080 });
  });
});
