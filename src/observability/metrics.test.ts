import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createEventBus } from './events.js';
import { createMetrics } from './metrics.js';

/** The value of one sample line, e.g. `portico_requests_total{route="/a",...}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const END = { requestId: 'r', method: 'GET', path: '/api/users/7', aborted: false };

describe('metrics from events', () => {
  it('counts requests by route template, method and status class, never raw paths', async () => {
    const events = createEventBus();
    const m = createMetrics(events);
    m.enable();
    events.emit('request:end', { ...END, routeId: 'GET /users/{id}', status: 200, durationMs: 12 });
    events.emit('request:end', { ...END, routeId: 'GET /users/{id}', status: 204, durationMs: 3 });
    events.emit('request:end', { ...END, method: 'HEAD', routeId: 'GET /users/{id}', status: 200, durationMs: 3 });
    events.emit('request:end', {
      ...END,
      routeId: undefined,
      status: 404,
      durationMs: 1,
      errorCode: 'GW_ROUTE_NOT_FOUND',
    });
    events.emit('request:end', {
      ...END,
      routeId: 'GET /users/{id}',
      status: 429,
      durationMs: 1,
      errorCode: 'GW_RATE_LIMITED',
      aborted: true,
    });
    const text = await m.render();
    assert.equal(sample(text, 'portico_requests_total{route="/users/{id}",method="GET",status_class="2xx"}'), 2);
    assert.equal(sample(text, 'portico_requests_total{route="/users/{id}",method="HEAD",status_class="2xx"}'), 1);
    assert.equal(sample(text, 'portico_requests_total{route="unmatched",method="GET",status_class="4xx"}'), 1);
    assert.equal(
      sample(text, 'portico_request_duration_seconds_count{route="/users/{id}",method="GET",status_class="2xx"}'),
      2,
    );
    assert.equal(
      sample(text, 'portico_request_duration_seconds_sum{route="/users/{id}",method="GET",status_class="2xx"}'),
      0.015,
    );
    assert.equal(
      sample(
        text,
        'portico_request_duration_seconds_bucket{le="0.005",route="/users/{id}",method="GET",status_class="2xx"}',
      ),
      1,
    );
    assert.equal(sample(text, 'portico_gateway_errors_total{code="GW_RATE_LIMITED"}'), 1);
    assert.equal(sample(text, 'portico_rate_limited_total{route="/users/{id}"}'), 1);
    assert.equal(sample(text, 'portico_requests_aborted_total{route="/users/{id}"}'), 1);
    assert.equal(text.includes('/api/users/7'), false);
  });

  it('records upstream latency, errors, mapping, auth, circuits, streams and reloads', async () => {
    const events = createEventBus();
    const m = createMetrics(events, {
      inFlight: { count: 3 },
      circuits: () => [{ origin: 'http://a:1', state: 'open' }],
      mappingCache: () => ({ hits: 5, misses: 2, coalesced: 1, evictions: 4, expirations: 0, size: 7 }),
      rateLimitBuckets: () => 9,
    });
    m.enable();
    events.emit('upstream:response', {
      routeId: 'GET /a',
      origin: 'http://a:1',
      call: 'backend',
      status: 200,
      durationMs: 20,
    });
    events.emit('upstream:response', {
      routeId: 'GET /a',
      origin: 'http://m:2',
      call: 'mapping',
      status: 200,
      durationMs: 2,
    });
    events.emit('upstream:error', {
      requestId: 'r',
      routeId: 'GET /a',
      origin: 'http://a:1',
      kind: 'refused',
      error: new Error('x'),
    });
    events.emit('mapping:fail', {
      requestId: 'r',
      routeId: 'GET /a',
      tag: 'user',
      url: 'http://m:2/u/1',
      reason: 'timeout',
      items: 3,
      calls: 1,
    });
    events.emit('auth:result', { requestId: 'r', routeId: 'GET /a', outcome: 'invalid' });
    events.emit('circuit:change', { origin: 'http://a:1', from: 'closed', to: 'open', consecutiveFailures: 5 });
    events.emit('stream:open', { kind: 'sse', routeId: 'GET /s' });
    events.emit('stream:open', { kind: 'sse', routeId: 'GET /s' });
    events.emit('stream:close', { kind: 'sse', routeId: 'GET /s', durationMs: 1500 });
    events.emit('stream:open', { kind: 'websocket', routeId: 'GET /ws' });
    events.emit('config:reload', { file: 'f', ok: false, problems: ['x'] });
    const text = await m.render();
    assert.equal(
      sample(text, 'portico_upstream_duration_seconds_count{route="/a",origin="http://a:1",call="backend"}'),
      1,
    );
    assert.equal(
      sample(text, 'portico_upstream_duration_seconds_sum{route="/a",origin="http://a:1",call="backend"}'),
      0.02,
    );
    assert.equal(sample(text, 'portico_mapping_calls_total{route="/a",origin="http://m:2"}'), 1);
    assert.equal(sample(text, 'portico_upstream_errors_total{route="/a",origin="http://a:1",kind="refused"}'), 1);
    assert.equal(sample(text, 'portico_mapping_failures_total{route="/a",tag="user"}'), 1);
    assert.equal(sample(text, 'portico_auth_results_total{route="/a",outcome="invalid"}'), 1);
    assert.equal(sample(text, 'portico_circuit_transitions_total{origin="http://a:1",state="open"}'), 1);
    assert.equal(sample(text, 'portico_circuit_state{origin="http://a:1",state="open"}'), 1);
    assert.equal(sample(text, 'portico_circuit_state{origin="http://a:1",state="closed"}'), 0);
    assert.equal(sample(text, 'portico_open_streams{route="/s",kind="sse"}'), 1);
    assert.equal(sample(text, 'portico_open_streams{route="/ws",kind="websocket"}'), 1);
    assert.equal(sample(text, 'portico_stream_duration_seconds_count{route="/s",kind="sse"}'), 1);
    assert.equal(sample(text, 'portico_config_reloads_total{result="rejected"}'), 1);
    assert.equal(sample(text, 'portico_requests_in_flight'), 3);
    assert.equal(sample(text, 'portico_mapping_cache_hits_total'), 5);
    assert.equal(sample(text, 'portico_mapping_cache_misses_total'), 2);
    assert.equal(sample(text, 'portico_mapping_cache_evictions_total'), 4);
    assert.equal(sample(text, 'portico_mapping_cache_entries'), 7);
    assert.equal(sample(text, 'portico_rate_limit_buckets'), 9);
    assert.match(text, /^process_cpu_user_seconds_total /m);
  });

  it('stops counting when disabled and counts again when re-enabled', async () => {
    const events = createEventBus();
    const m = createMetrics(events);
    const emit = () => events.emit('request:end', { ...END, routeId: 'GET /a', status: 200, durationMs: 1 });
    m.enable();
    m.enable();
    emit();
    m.disable();
    assert.equal(events.has('request:end'), false);
    emit();
    m.enable();
    emit();
    assert.equal(sample(await m.render(), 'portico_requests_total{route="/a",method="GET",status_class="2xx"}'), 2);
  });

  it('reads the dropped log lines at scrape time', async () => {
    let dropped = 0;
    const m = createMetrics(createEventBus(), { logLinesDropped: () => dropped });
    assert.equal(sample(await m.render(), 'portico_log_lines_dropped_total'), 0);
    dropped = 42;
    assert.equal(sample(await m.render(), 'portico_log_lines_dropped_total'), 42);
  });

  it('counts the HTTP cache look-ups by route template and result, the same template summed', async () => {
    const events = createEventBus();
    const m = createMetrics(events);
    m.enable();
    for (let i = 0; i < 3; i++) events.emit('cache:lookup', { routeId: 'GET /items/{id}', result: 'hit' });
    events.emit('cache:lookup', { routeId: 'GET /items/{id}', result: 'miss' });
    events.emit('cache:lookup', { routeId: 'HEAD /items/{id}', result: 'hit' });
    const text = await m.render();
    assert.equal(sample(text, 'portico_cache_requests_total{route="/items/{id}",result="hit"}'), 4);
    assert.equal(sample(text, 'portico_cache_requests_total{route="/items/{id}",result="miss"}'), 1);
    assert.equal(sample(text, 'portico_cache_requests_total{route="/items/{id}",result="stale"}'), undefined);
    events.emit('cache:lookup', { routeId: 'GET /items/{id}', result: 'hit' });
    assert.equal(sample(await m.render(), 'portico_cache_requests_total{route="/items/{id}",result="hit"}'), 5);
  });
});
