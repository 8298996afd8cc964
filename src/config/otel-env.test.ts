import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseResourceAttributes, resolveTracing, writtenTelemetryKeys } from './otel-env.js';

const defaults = { metrics: true, metricsPublic: false, propagation: true, serviceName: 'portico', sampleRatio: 1 };
const none = new Set<string>();

describe('OTEL_* environment: endpoint, service and resource', () => {
  it('appends /v1/traces to OTEL_EXPORTER_OTLP_ENDPOINT and uses the traces endpoint as-is, which wins', () => {
    assert.equal(
      resolveTracing(defaults, none, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' }).tracesUrl,
      'http://c:4318/v1/traces',
    );
    assert.equal(
      resolveTracing(defaults, none, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/v1/traces' }).tracesUrl,
      'http://c:4318/v1/traces/v1/traces',
    );
    assert.equal(
      resolveTracing(defaults, none, {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b/x',
      }).tracesUrl,
      'http://b/x',
    );
    assert.equal(resolveTracing(defaults, none, {}).tracesUrl, undefined);
  });

  it('an endpoint that is no http URL is refused with a warning that shows neither its credentials nor its query', () => {
    const t = resolveTracing(defaults, none, {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://otel-user:otel-s3cr3t@collector:4317/v1/traces?api-key=otel-k3y',
    });
    assert.equal(t.tracesUrl, undefined);
    assert.deepEqual(t.warnings, [
      'OTLP traces endpoint "grpc://***@collector:4317/v1/traces?***" is not an http:// or https:// URL; spans are not exported',
    ]);
  });

  it('lets the keys written in the file win', () => {
    const yaml = { ...defaults, otlpEndpoint: 'http://yaml:4318', serviceName: 'portico', sampleRatio: 1 };
    const written = writtenTelemetryKeys({
      config: { telemetry: { otlpEndpoint: 'x', serviceName: 'portico', sampleRatio: 1 } },
    });
    const t = resolveTracing(yaml, written, {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://env/v1/traces',
      OTEL_SERVICE_NAME: 'env',
      OTEL_TRACES_SAMPLER: 'parentbased_always_off',
    });
    assert.deepEqual([t.tracesUrl, t.serviceName, t.sampleRatio], ['http://yaml:4318/v1/traces', 'portico', 1]);
    const unwritten = resolveTracing(defaults, writtenTelemetryKeys({ config: {} }), {
      OTEL_SERVICE_NAME: 'env',
      OTEL_TRACES_SAMPLER: 'parentbased_always_off',
    });
    assert.deepEqual([unwritten.serviceName, unwritten.sampleRatio], ['env', 0]);
  });

  it('percent-decodes resource attributes, takes service.name from them after OTEL_SERVICE_NAME, reports bad entries', () => {
    const warnings: string[] = [];
    assert.deepEqual(parseResourceAttributes('a=1, b%3Dc = x%2Cy ,,bad,=v', warnings), [
      ['a', '1'],
      ['b=c', 'x,y'],
    ]);
    assert.equal(warnings.length, 2);
    const t = resolveTracing(defaults, none, { OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attrs,k=v' });
    assert.equal(t.serviceName, 'from-attrs');
    assert.deepEqual(t.resourceAttributes, [['k', 'v']]);
    assert.equal(
      resolveTracing(defaults, none, { OTEL_RESOURCE_ATTRIBUTES: 'service.name=a', OTEL_SERVICE_NAME: 'b' })
        .serviceName,
      'b',
    );
  });
});

describe('OTEL_* environment: sampling and switching export off', () => {
  it('maps the samplers the gateway supports and warns about the rest', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c' };
    const r = (sampler: string, arg?: string) =>
      resolveTracing(defaults, none, {
        ...env,
        OTEL_TRACES_SAMPLER: sampler,
        ...(arg === undefined ? {} : { OTEL_TRACES_SAMPLER_ARG: arg }),
      });
    assert.deepEqual([r('parentbased_always_on').sampleRatio, r('parentbased_always_on').warnings], [1, []]);
    assert.deepEqual([r('parentbased_always_off').sampleRatio, r('parentbased_always_off').warnings], [0, []]);
    assert.deepEqual(
      [r('parentbased_traceidratio', '0.25').sampleRatio, r('parentbased_traceidratio', '0.25').warnings],
      [0.25, []],
    );
    assert.equal(r('always_off').tracesUrl, undefined);
    assert.equal(r('always_on').sampleRatio, 1);
    assert.equal(r('always_on').warnings.length, 1);
    assert.equal(r('traceidratio', '0.5').sampleRatio, 0.5);
    assert.equal(r('traceidratio', '0.5').warnings.length, 1);
    assert.deepEqual(
      [r('parentbased_traceidratio', '7').sampleRatio, r('parentbased_traceidratio', '7').warnings.length],
      [1, 1],
    );
    assert.deepEqual(
      [r('xray').sampleRatio, r('xray').tracesUrl, r('xray').warnings.length],
      [1, 'http://c/v1/traces', 1],
    );
  });

  it('turns export off with OTEL_SDK_DISABLED=true, and refuses an endpoint that is not http(s)', () => {
    assert.equal(
      resolveTracing({ ...defaults, otlpEndpoint: 'http://yaml' }, new Set(['otlpEndpoint']), {
        OTEL_SDK_DISABLED: 'TRUE',
      }).tracesUrl,
      undefined,
    );
    assert.equal(
      resolveTracing(defaults, none, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_SDK_DISABLED: 'false' }).tracesUrl,
      'http://c/v1/traces',
    );
    const bad = resolveTracing(defaults, none, { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' });
    assert.deepEqual([bad.tracesUrl, bad.warnings.length], [undefined, 1]);
  });
});
