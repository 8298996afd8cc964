import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CompiledRoute, Exchange } from '../pipeline/types.js';
import { fakeExchange, fakeUpgradeExchange, neverRuns, recordingNext } from '../../test/support/exchanges.js';
import { createQuotaCounters, quotaLayer, routeQuota, type QuotaLimitList } from './quota.js';
import { createWindowClock, windowAt } from './quota-windows.js';
import { createQuotaUsage } from './quota-usage.js';
import { loadConfigText } from '../config/load.js';

const route = { id: 'GET /a' } as CompiledRoute;
const at = (iso: string) => Date.parse(iso);

describe('route quota policy', () => {
  const shared = { key: 'consumer', day: 100, plans: { pro: { day: 1000, month: 20000 } } };

  it('config.quotas applies to a route without its own quota, plans included', () => {
    const p = routeQuota({ id: 'GET /a', quota: undefined }, shared)!;
    assert.equal(p.scope, '');
    assert.deepEqual(p.key, { kind: 'consumer' });
    assert.deepEqual(p.defaults, [{ window: 'day', limit: 100 }]);
    assert.deepEqual(p.plans.get('pro'), [
      { window: 'day', limit: 1000 },
      { window: 'month', limit: 20000 },
    ]);
  });

  it('a route with numbers has its own counters and only its own plans; enabled: false exempts it', () => {
    const own = routeQuota({ id: 'GET /a', quota: { enabled: true, minute: 5, key: 'header:X-Tenant' } }, shared)!;
    assert.equal(own.scope, 'GET /a\n');
    assert.deepEqual(own.key, { kind: 'header', name: 'x-tenant' });
    assert.deepEqual(own.defaults, [{ window: 'minute', limit: 5 }]);
    assert.equal(own.plans.size, 0);
    assert.equal(routeQuota({ id: 'GET /a', quota: { enabled: false } }, shared), undefined);
    assert.equal(routeQuota({ id: 'GET /a', quota: undefined }, undefined), undefined);
  });

  it('a route that only names a key shares config.quotas counters under that key', () => {
    const p = routeQuota({ id: 'GET /a', quota: { enabled: true, key: 'claims.sub' } }, shared)!;
    assert.equal(p.scope, '');
    assert.deepEqual(p.key, { kind: 'claim', name: 'sub' });
  });
});

describe("docs/consumers.md's example", () => {
  it('gives a listed plan its windows and everyone else the top-level day', () => {
    const yaml = `routes:
  - { method: GET, route: /a, service: localhost:3000, path: /a }
config:
  quotas:
    key: consumer
    day: 1000
    plans:
      free: { day: 1000, month: 20000 }
      pro: { minute: 600, day: 100000 }
    store: redis
  redis:
    url: redis://redis.internal:6379
`;
    const loaded = loadConfigText(yaml, 'g.yaml', {});
    assert.ok(loaded.ok);
    const p = routeQuota(loaded.config.routes[0]!, loaded.config.settings.quotas)!;
    assert.deepEqual(p.defaults, [{ window: 'day', limit: 1000 }]);
    assert.deepEqual(p.plans.get('pro'), [
      { window: 'minute', limit: 600 },
      { window: 'day', limit: 100000 },
    ]);
    assert.equal(loaded.config.settings.quotas?.store, 'redis');
  });
});

describe('local quota counters', () => {
  const limits: QuotaLimitList = [
    { window: 'minute', limit: 3 },
    { window: 'day', limit: 4 },
  ];
  const windowsAt = (now: number) => limits.map((l) => windowAt(l.window, now));

  it('admits while every window has room, counts in all, and a refusal counts in none', () => {
    let now = at('2026-06-01T10:00:05Z');
    const counters = createQuotaCounters({ now: () => now });
    const take = () => counters.take('consumer:a', limits, windowsAt(now));
    assert.deepEqual(take(), { admitted: true, counts: [1, 1] });
    take();
    assert.deepEqual(take(), { admitted: true, counts: [3, 3] });
    assert.deepEqual(take(), { admitted: false, counts: [3, 3] }, 'the minute is full');
    now = at('2026-06-01T10:01:00Z');
    assert.deepEqual(take(), { admitted: true, counts: [1, 4] }, 'a new minute, the same day');
    assert.deepEqual(take(), { admitted: false, counts: [1, 4] }, 'the day is full');
    now = at('2026-06-02T00:00:00Z');
    assert.deepEqual(take(), { admitted: true, counts: [1, 1] }, 'a new day');
    assert.deepEqual(counters.take('consumer:b', limits, windowsAt(now)).counts, [1, 1], 'each key its own');
  });

  it('sync raises the counts to the shared ones and keeps a higher local count', () => {
    const now = at('2026-06-01T10:00:05Z');
    const counters = createQuotaCounters({ now: () => now });
    counters.take('consumer:a', limits, windowsAt(now));
    counters.sync('consumer:a', limits, windowsAt(now), [0, 3]);
    assert.deepEqual(counters.take('consumer:a', limits, windowsAt(now)), { admitted: true, counts: [2, 4] });
    counters.sync('consumer:new', limits, windowsAt(now), [3, 3]);
    assert.deepEqual(counters.take('consumer:new', limits, windowsAt(now)), { admitted: false, counts: [3, 3] });
    const nextMinute = at('2026-06-01T10:01:00Z');
    counters.sync('consumer:new', limits, windowsAt(nextMinute), [1, 3]);
    assert.deepEqual(counters.take('consumer:new', limits, windowsAt(nextMinute)), { admitted: true, counts: [2, 4] });
  });

  it('keeps at most maxKeys callers', () => {
    const now = at('2026-06-01T10:00:05Z');
    const counters = createQuotaCounters({ maxKeys: 2, now: () => now });
    for (const k of ['a', 'b', 'c']) counters.take(k, limits, windowsAt(now));
    assert.equal(counters.size, 2);
  });
});

describe('quota layer', () => {
  const policy = routeQuota(
    { id: 'GET /a', quota: undefined },
    { key: 'consumer', minute: 2, day: 10, plans: { pro: { minute: 3 } } },
  )!;
  const now = at('2026-06-01T10:00:45Z');
  const layerWith = () => {
    const counters = createQuotaCounters({ now: () => now });
    const usage = createQuotaUsage();
    const layer = quotaLayer(policy, {
      store: counters,
      keyOf: (ex) => (ex.consumer === undefined ? '10.0.0.7' : `consumer:${ex.consumer.id}`),
      windows: createWindowClock(),
      now: () => now,
      observe: usage.observe,
    });
    return { layer, usage };
  };
  const as = (ex: Exchange, id: string, plan?: string) => ((ex.consumer = { id, plan }), ex);

  it('passes with one RateLimit item per window, after the rate limit items', async () => {
    const { layer } = layerWith();
    const { ex, written } = fakeExchange(route);
    ex.res.setHeader('ratelimit-policy', '"burst";q=20;w=2');
    ex.res.setHeader('ratelimit', '"burst";r=19;t=1');
    const next = recordingNext<Exchange>();
    await layer(next.next)(as(ex, 'alice'));
    assert.equal(next.seen.length, 1);
    assert.equal(
      written.headers['ratelimit-policy'],
      '"burst";q=20;w=2, "quota-minute";q=2;w=60, "quota-day";q=10;w=86400',
    );
    assert.equal(written.headers.ratelimit, '"burst";r=19;t=1, "quota-minute";r=1;t=15, "quota-day";r=9;t=50355');
  });

  it('answers 429 GW_QUOTA_EXCEEDED with Retry-After to the end of the full window', async () => {
    const { layer, usage } = layerWith();
    for (let i = 0; i < 2; i++) await layer(recordingNext<Exchange>().next)(as(fakeExchange(route).ex, 'alice'));
    const { ex, written } = fakeExchange(route);
    await layer(neverRuns())(as(ex, 'alice'));
    assert.equal(written.status, 429);
    assert.equal(ex.errorCode, 'GW_QUOTA_EXCEEDED');
    assert.deepEqual(JSON.parse(written.body!.toString()), { error: 'Quota exceeded', success: false });
    assert.equal(written.headers['retry-after'], '15');
    assert.equal(written.headers.ratelimit, '"quota-minute";r=0;t=15, "quota-day";r=8;t=50355');
    assert.equal(written.headers['x-portico-error'], 'GW_QUOTA_EXCEEDED');
    const [top] = usage.top(5, now);
    assert.deepEqual(top, {
      caller: 'consumer:alice',
      route: undefined,
      plan: undefined,
      windows: [
        { window: 'minute', used: 2, limit: 2, resetSec: 15 },
        { window: 'day', used: 2, limit: 10, resetSec: 50355 },
      ],
      quotaRefused: 1,
      rateLimited: 0,
    });
  });

  it("a consumer's plan gets the plan's windows; another consumer has its own count", async () => {
    const { layer } = layerWith();
    const statuses: (number | undefined)[] = [];
    for (let i = 0; i < 4; i++) {
      const { ex, written } = fakeExchange(route);
      await layer(async () => void (written.status = 200))(as(ex, 'paid', 'pro'));
      statuses.push(written.status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    const other = fakeExchange(route);
    await layer(async () => void (other.written.status = 200))(as(other.ex, 'bob', 'unlisted-plan'));
    assert.equal(other.written.status, 200);
    assert.match(String(other.written.headers.ratelimit), /"quota-minute";r=1;/, 'an unlisted plan gets the defaults');
  });

  it('refuses a WebSocket handshake over its quota on the socket', async () => {
    const { layer } = layerWith();
    for (let i = 0; i < 2; i++) await layer(recordingNext<Exchange>().next)(as(fakeUpgradeExchange(route).ex, 'ws'));
    const { ex, socket } = fakeUpgradeExchange(route);
    await layer(neverRuns())(as(ex, 'ws'));
    assert.match(socket.text(), /^HTTP\/1\.1 429 Too Many Requests\r\n/);
    assert.match(socket.text(), /\r\nretry-after: 15\r\n/);
  });
});
