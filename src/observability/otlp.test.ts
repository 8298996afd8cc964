import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { epochNanos, tracesUrl } from './otlp.js';

describe('OTLP helpers', () => {
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
});
