/**
 * The shared quota store against a real `redis-server`: the local counters' answers, one key per
 * caller and window that expires after its window, two connections counting together, the local
 * counters (counted as a fallback) while Redis is down, the quota connection's own command timeout,
 * and local decisions that start from the counts Redis last gave without counting a request twice.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../support/redis.js';
import { captureLogger } from '../support/capture-logger.js';
import { createRedisConnection, type RedisConnection } from '../../src/redis/connection.js';
import { createEventBus, type GatewayEvents } from '../../src/observability/events.js';
import { createQuotaCounters, type QuotaLimitList, type QuotaStore } from '../../src/layers/quota.js';
import { createRedisQuotaStore, createSharedQuotas, type SharedQuotas } from '../../src/layers/redis-quota.js';
import { waitFor } from '../support/wait-for.js';
import { windowAt } from '../../src/layers/quota-windows.js';

const LIMITS: QuotaLimitList = [
  { window: 'minute', limit: 1000 },
  { window: 'day', limit: 3 },
];
const NOW = Date.parse('2026-06-01T10:00:05Z');
const WINDOWS = LIMITS.map((l) => windowAt(l.window, NOW));

let server: TestRedis;
const open: RedisConnection[] = [];
const quotaConnections: SharedQuotas[] = [];
before(async () => {
  server = await startRedis();
});
after(async () => {
  await Promise.all([...open.map((c) => c.close()), ...quotaConnections.map((q) => q.close())]);
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

/** Settings of `config.redis` whose `commandTimeoutMs` is short, as the default (50 ms) is. */
function shortSettings(keyPrefix: string) {
  return { url: server.url, keyPrefix, connectTimeoutMs: 1_000, commandTimeoutMs: 50, required: false };
}

/** The quota connection of a gateway whose `config.redis` is `shortSettings`, with its fallbacks. */
function sharedQuotas(keyPrefix: string) {
  const events = createEventBus();
  const fallbacks: GatewayEvents['redis:fallback'][] = [];
  events.on('redis:fallback', (e) => fallbacks.push(e));
  const logger = captureLogger().logger;
  const quotas = createSharedQuotas({
    settings: shortSettings(keyPrefix),
    logger,
    events,
    fallback: createQuotaCounters({ now: () => NOW }),
    now: () => NOW,
  });
  quotaConnections.push(quotas);
  return { quotas, fallbacks, events, logger };
}

describe('the quota connection', () => {
  it('waits for a stalled Redis up to quotas.redisCommandTimeoutMs while other uses give up at redis.commandTimeoutMs', async () => {
    const { quotas, fallbacks, events, logger } = sharedQuotas('own:');
    const store = quotas.store(10_000);
    const shared = createRedisConnection({ settings: shortSettings('own:'), logger, events });
    open.push(shared);
    await Promise.all([shared.started, quotas.connection!.started]);
    server.freeze();
    let decision;
    try {
      decision = store.take('consumer:carol', LIMITS, WINDOWS);
      // The rate limits' and the mapping cache's connection keeps the short timeout.
      assert.equal(await shared.send('rate-limit', 'PING', []), undefined);
    } finally {
      server.thaw();
    }
    assert.deepEqual(await decision, { admitted: true, counts: [1, 1] });
    assert.equal(fallbacks.length, 0);
  });

  it('a decision made without Redis starts from the counts Redis last gave: a full quota stays full', async () => {
    const { quotas, fallbacks } = sharedQuotas('full:');
    const store = quotas.store(100);
    await quotas.connection!.started;
    for (let i = 0; i < 3; i++) assert.equal((await store.take('consumer:dave', LIMITS, WINDOWS)).admitted, true);
    server.freeze();
    try {
      assert.deepEqual(await store.take('consumer:dave', LIMITS, WINDOWS), { admitted: false, counts: [3, 3] });
    } finally {
      server.thaw();
    }
    assert.equal(fallbacks.length, 1);
  });

  it('a request decided locally after its command timed out, but that Redis counted, is counted once', async () => {
    const { quotas, fallbacks } = sharedQuotas('once:');
    const store = quotas.store(100);
    const connection = quotas.connection!;
    await connection.started;
    assert.deepEqual(await store.take('consumer:erin', LIMITS, WINDOWS), { admitted: true, counts: [1, 1] });
    server.freeze();
    try {
      // Timed out: admitted by the local counters; the frozen Redis still runs the script once thawed.
      assert.deepEqual(await store.take('consumer:erin', LIMITS, WINDOWS), { admitted: true, counts: [2, 2] });
    } finally {
      server.thaw();
    }
    await waitFor(() => connection.isUp, 5_000, 'the quota connection back up');
    assert.deepEqual(await store.take('consumer:erin', LIMITS, WINDOWS), { admitted: true, counts: [3, 3] });
    await server.stop();
    try {
      // Redis's 3 already holds the request the local counters admitted: 3, not 4.
      assert.deepEqual(await store.take('consumer:erin', LIMITS, WINDOWS), { admitted: false, counts: [3, 3] });
    } finally {
      await server.start();
    }
    assert.equal(fallbacks.length, 2);
  });
});
