import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createEventBus, type GatewayEvents } from '../observability/events.js';
import { createLiveStats, SERIES_SECONDS } from './live-stats.js';

function setup() {
  const events = createEventBus();
  let t = 1_700_000_000_000;
  const clock = {
    now: () => t,
    advance: (ms: number) => (t += ms),
  };
  const stats = createLiveStats(events, clock.now);
  stats.start();
  const end = (over: Partial<GatewayEvents['request:end']> = {}) =>
    events.emit('request:end', {
      requestId: 'r1',
      method: 'GET',
      routeId: 'GET /a',
      path: '/api/a',
      status: 200,
      durationMs: 2,
      aborted: false,
      ...over,
    });
  return { events, clock, stats, end };
}

describe('live stats', () => {
  it('subscribes only while started', () => {
    const events = createEventBus();
    const stats = createLiveStats(events);
    assert.equal(events.has('request:end'), false);
    stats.start();
    stats.start();
    assert.equal(events.has('request:end'), true);
    assert.equal(events.has('stream:open'), true);
    stats.stop();
    for (const name of ['request:end', 'upstream:response', 'upstream:error', 'mapping:fail', 'config:reload'] as const)
      assert.equal(events.has(name), false, name);
  });

  it('counts requests per route over the last complete minute, with status classes and percentiles', () => {
    const { clock, stats, end } = setup();
    for (let i = 0; i < 90; i++) end({ durationMs: 1 });
    for (let i = 0; i < 10; i++) end({ durationMs: 100, status: 502, errorCode: 'GW_UPSTREAM_UNREACHABLE' });
    end({ routeId: 'GET /b', status: 404 });
    // The second being counted is not read until it is complete.
    assert.equal(stats.traffic().lastMinute.requests, 0);
    clock.advance(1000);
    const a = stats.routeTraffic('GET /a');
    assert.equal(a.requests, 100);
    assert.equal(a.statuses['2xx'], 90);
    assert.equal(a.statuses['5xx'], 10);
    assert.equal(a.gatewayErrors, 10);
    assert.ok(a.p50Ms! >= 0.8 && a.p50Ms! <= 1.26, `p50 ${a.p50Ms}`);
    assert.ok(a.p99Ms! >= 80 && a.p99Ms! <= 126, `p99 ${a.p99Ms}`);
    assert.equal(stats.routeTraffic('GET /b').statuses['4xx'], 1);
    const all = stats.traffic();
    assert.equal(all.lastSecond, 101);
    assert.equal(all.lastMinute.requests, 101);
    assert.equal(all.lastMinute.perSec, 1.68);
    // A minute later, those requests are out of the window.
    clock.advance(60_000);
    assert.equal(stats.routeTraffic('GET /a').requests, 0);
    assert.equal(stats.traffic().lastMinute.p50Ms, null);
  });

  it('counts rate-limit refusals and keeps the last 50 errors, newest first, with their cause', () => {
    const { events, stats, end } = setup();
    end({ status: 429, errorCode: 'GW_RATE_LIMITED', requestId: 'limited' });
    events.emit('upstream:error', {
      requestId: 'cut',
      routeId: 'GET /a',
      origin: 'http://users:3000',
      kind: 'refused',
      error: new Error('x'),
    });
    end({ status: 502, errorCode: 'GW_UPSTREAM_UNREACHABLE', requestId: 'cut', path: '/api/a?token=secret' });
    assert.equal(stats.rateLimitedTotal, 1);
    const [cut, limited] = stats.errors();
    assert.deepEqual(
      { ...cut, time: undefined },
      {
        time: undefined,
        requestId: 'cut',
        method: 'GET',
        path: '/api/a',
        routeId: 'GET /a',
        status: 502,
        code: 'GW_UPSTREAM_UNREACHABLE',
        detail: 'refused from http://users:3000',
      },
    );
    assert.equal(limited!.code, 'GW_RATE_LIMITED');
    for (let i = 0; i < 60; i++) end({ status: 500, requestId: `e${i}` });
    const errors = stats.errors();
    assert.equal(errors.length, 50);
    assert.equal(errors[0]!.requestId, 'e59');
    assert.equal(errors[0]!.code, 'BACKEND_5XX');
    assert.equal(errors[49]!.requestId, 'e10');
  });

  it('does not list successful answers or a backend 4xx as errors', () => {
    const { stats, end } = setup();
    end({ status: 200 });
    end({ status: 404 });
    assert.deepEqual(stats.errors(), []);
  });

  it('counts open streams by kind and route', () => {
    const { events, stats } = setup();
    events.emit('stream:open', { kind: 'sse', routeId: 'GET /feed' });
    events.emit('stream:open', { kind: 'sse', routeId: 'GET /feed' });
    events.emit('stream:open', { kind: 'websocket', routeId: 'GET /ws' });
    events.emit('stream:close', { kind: 'sse', routeId: 'GET /feed', durationMs: 5 });
    assert.deepEqual(stats.openStreams(), { sse: 1, websocket: 1 });
    assert.equal(stats.routeStreams('GET /feed'), 1);
    assert.equal(stats.routeStreams('GET /ws'), 1);
  });

  it('counts calls and failures per backend origin', () => {
    const { events, clock, stats } = setup();
    const origin = 'http://users:3000';
    const response = (status: number) =>
      events.emit('upstream:response', { routeId: 'GET /a', origin, call: 'backend', status, durationMs: 1 });
    response(200);
    response(503);
    events.emit('upstream:error', { requestId: 'x', routeId: 'GET /a', origin, kind: 'timeout', error: undefined });
    clock.advance(1000);
    assert.deepEqual(stats.backendCalls(origin), { calls: 3, failures: 2 });
    assert.deepEqual(stats.backendCalls('http://other:1'), { calls: 0, failures: 0 });
  });

  it('keeps the reload history, newest first, with the problems of a rejected file', () => {
    const { events, stats } = setup();
    events.emit('config:reload', { file: 'gw.yaml', ok: true });
    events.emit('config:reload', { file: 'gw.yaml', ok: false, problems: ['gw.yaml:3:5: bad'] });
    const [last, first] = stats.reloads();
    assert.equal(last!.ok, false);
    assert.deepEqual(last!.problems, ['gw.yaml:3:5: bad']);
    assert.equal(first!.ok, true);
    for (let i = 0; i < 30; i++) events.emit('config:reload', { file: 'gw.yaml', ok: true });
    assert.equal(stats.reloads().length, 20);
  });

  it('gives 300 points of one second, oldest first, with the requests, 5xx and percentiles of each', () => {
    const { clock, stats, end } = setup();
    end({ durationMs: 3 });
    clock.advance(1000);
    end({ status: 503 });
    end({ status: 200 });
    clock.advance(1000);
    const { points } = stats.series();
    assert.equal(points.length, SERIES_SECONDS);
    assert.equal(points.at(-1)!.t - points[0]!.t, SERIES_SECONDS - 1);
    assert.equal(points.at(-1)!.t, Math.floor(clock.now() / 1000) - 1);
    assert.deepEqual(
      points.slice(-2).map((p) => [p.requests, p.errors]),
      [
        [1, 0],
        [2, 1],
      ],
    );
    assert.ok(points.at(-2)!.p50Ms! > 2 && points.at(-2)!.p50Ms! <= 3.2);
    assert.equal(points[0]!.p50Ms, null);
  });

  it('forgets a removed route once it saw nothing for a minute', () => {
    const { clock, stats, end } = setup();
    end({ routeId: 'GET /old' });
    clock.advance(1000);
    end({ routeId: 'GET /a' });
    stats.prune(new Set(['GET /a']), new Set());
    assert.equal(stats.routeTraffic('GET /old').requests, 1);
    assert.deepEqual(stats.tracked(), { routes: 2, origins: 0 });
    clock.advance(62_000);
    stats.prune(new Set(['GET /a']), new Set());
    assert.deepEqual(stats.tracked(), { routes: 1, origins: 0 });
  });
});
