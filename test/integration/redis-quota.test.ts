/**
 * The shared quota store against a real `redis-server`: the local counters' answers, one key per
 * caller and window that expires after its window, two connections counting together, and the
 * local counters (counted as a fallback) while Redis is down.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../support/redis.js';
import { captureLogger } from '../support/capture-logger.js';
import { createRedisConnection, type RedisConnection } from '../../src/redis/connection.js';
import { createEventBus, type GatewayEvents } from '../../src/observability/events.js';
import { createQuotaCounters, type QuotaLimitList, type QuotaStore } from '../../src/layers/quota.js';
import { createRedisQuotaStore } from '../../src/layers/redis-quota.js';
import { windowAt } from '../../src/layers/quota-windows.js';

const LIMITS: QuotaLimitList = [
  { window: 'minute', limit: 1000 },
  { window: 'day', limit: 3 },
];
const NOW = Date.parse('2026-06-01T10:00:05Z');
const WINDOWS = LIMITS.map((l) => windowAt(l.window, NOW));

let server: TestRedis;
const open: RedisConnection[] = [];
before(async () => {
  server = await startRedis();
});
after(async () => {
  await Promise.all(open.map((c) => c.close()));
  await server.stop();
});

function store(): { store: QuotaStore; fallbacks: GatewayEvents['redis:fallback'][]; redis: RedisConnection } {
  const events = createEventBus();
  const fallbacks: GatewayEvents['redis:fallback'][] = [];
  events.on('redis:fallback', (e) => fallbacks.push(e));
  const settings = {
    url: server.url,
    keyPrefix: 'quota:',
    connectTimeoutMs: 1_000,
    commandTimeoutMs: 5_000,
    required: false,
  };
  const redis = createRedisConnection({ settings, logger: captureLogger().logger, events });
  open.push(redis);
  const s = createRedisQuotaStore({ redis, events, fallback: createQuotaCounters({ now: () => NOW }), now: () => NOW });
  return { store: s, fallbacks, redis };
}

describe('shared quota store', () => {
  it('two connections count together and answer as the local counters do', async () => {
    const a = store();
    const b = store();
    await Promise.all([a.redis.started, b.redis.started]);
    const answers = [];
    for (const s of [a, b, a, b]) answers.push(await s.store.take('consumer:alice', LIMITS, WINDOWS));
    const local = createQuotaCounters({ now: () => NOW });
    const expected = [1, 2, 3, 4].map(() => local.take('consumer:alice', LIMITS, WINDOWS));
    assert.deepEqual(answers, expected);
    assert.deepEqual(answers.at(-1), { admitted: false, counts: [3, 3] });
    assert.equal(a.fallbacks.length + b.fallbacks.length, 0);

    const raw = new Redis(server.url);
    try {
      const dayKey = `quota:q:consumer:alice|day:${WINDOWS[1]!.start / 1000}`;
      assert.deepEqual((await raw.keys('quota:q:*')).sort(), [
        dayKey,
        `quota:q:consumer:alice|minute:${WINDOWS[0]!.start / 1000}`,
      ]);
      const ttl = await raw.pttl(dayKey);
      const expectedTtl = WINDOWS[1]!.end - NOW + 60_000;
      assert.ok(ttl > expectedTtl - 5_000 && ttl <= expectedTtl, `ttl ${ttl}`);
    } finally {
      raw.disconnect();
    }
  });

  it('decides with the local counters while Redis is down, counted as a fallback', async () => {
    const s = store();
    await s.redis.started;
    await server.stop();
    try {
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await s.store.take('consumer:bob', LIMITS, WINDOWS));
      assert.deepEqual(
        answers.map((d) => d.admitted),
        [true, true, true, false],
      );
      assert.equal(s.fallbacks.length, 4);
      assert.deepEqual(s.fallbacks[0], { use: 'quota' });
    } finally {
      await server.start();
    }
  });
});
