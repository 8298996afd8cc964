/**
 * The Redis connection, the shared rate-limit store and the shared mapping cache against a real
 * `redis-server` (test/support/redis.ts): the same answers as the local store, buckets shared
 * between connections, a killed or frozen Redis answered locally in bounded time, recovery.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';
import { createRedisConnection, type RedisConnection, type RedisSettings } from '../../src/redis/connection.js';
import { createEventBus, type EventBus, type GatewayEvents } from '../../src/observability/events.js';
import { captureLogger } from '../support/capture-logger.js';
import { createRateLimiter, type RateLimitStore } from '../../src/layers/rate-limit.js';
import { createRedisRateLimitStore } from '../../src/layers/redis-rate-limit.js';
import { createMappingCache } from '../../src/mapping/cache.js';
import { type MappingOutcome } from '../../src/mapping/types.js';
import { createRedisMappingStore } from '../../src/mapping/redis-cache.js';

interface Harness {
  readonly redis: RedisConnection;
  readonly events: EventBus;
  readonly logs: Record<string, unknown>[];
  readonly seen: { [K in keyof GatewayEvents]?: GatewayEvents[K][] };
  /** Resolves with the first log line whose message starts with `prefix`. */
  logged(prefix: string): Promise<Record<string, unknown>>;
}

const open: RedisConnection[] = [];

function connect(url: string, overrides: Partial<RedisSettings> = {}): Harness {
  const waiting: { prefix: string; resolve: (l: Record<string, unknown>) => void }[] = [];
  const { logger, lines: logs } = captureLogger((parsed) => {
    for (const w of waiting.filter((w) => String(parsed.msg).startsWith(w.prefix))) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve(parsed);
    }
  });
  const events = createEventBus();
  const seen: Harness['seen'] = {};
  for (const name of ['redis:response', 'redis:error', 'redis:fallback'] as const)
    events.on(name, (e) => ((seen[name] ??= []) as unknown[]).push(e));
  const settings: RedisSettings = {
    url,
    keyPrefix: 'test:',
    connectTimeoutMs: 1_000,
    // Generous: the test machine is shared; the timeout test sets its own.
    commandTimeoutMs: 1_000,
    required: false,
    ...overrides,
  };
  const redis = createRedisConnection({ settings, logger, events });
  open.push(redis);
  const logged = (prefix: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const found = logs.find((l) => String(l.msg).startsWith(prefix));
      if (found !== undefined) resolve(found);
      else waiting.push({ prefix, resolve });
    });
  return { redis, events, logs, seen, logged };
}

/** A policy slow enough that the refill between two calls is far below one token. */
const SLOW = { scope: '', requestsPerSec: 0.001, burst: 3 };

async function takeMany(store: RateLimitStore, key: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await store.take(key, SLOW));
  return out;
}

let server: TestRedis;
before(async () => {
  server = await startRedis({ password: 'pörtico secret' });
});
after(async () => {
  await Promise.all(open.map((c) => c.close()));
  await server.stop();
});

describe('redis connection at start', () => {
  it('connects with the right password', async () => {
    const h = connect(server.url);
    assert.equal(await h.redis.started, undefined);
    assert.equal(h.redis.isUp, true);
    await h.logged('Redis connected');
  });

  it('a wrong password is a clear start problem, without the password', async () => {
    const h = connect(`redis://:wrong-one@127.0.0.1:${server.port}`);
    const problem = await h.redis.started;
    assert.match(problem ?? '', /^Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+: authentication failed/);
    assert.doesNotMatch(problem ?? '', /wrong-one/);
  });

  it('an unknown host is a clear start problem', async () => {
    const h = connect('redis://no-such-host.invalid:6379');
    assert.match((await h.redis.started) ?? '', /host not found/);
  });

  it('a Redis that refuses connections is an outage, not a start problem', async () => {
    const h = connect('redis://127.0.0.1:1');
    assert.equal(await h.redis.started, undefined);
    assert.equal(h.redis.isUp, false);
    await h.logged('Redis unreachable at start');
  });
});

describe('shared rate-limit store', () => {
  it('answers what the local store answers', async () => {
    const h = connect(server.url);
    await h.redis.started;
    const shared = createRedisRateLimitStore({ redis: h.redis, fallback: createRateLimiter(), events: h.events });
    const sharedAnswers = await takeMany(shared, 'same-answers', 5);
    const localAnswers = await takeMany(createRateLimiter(), 'same-answers', 5);
    assert.deepEqual(
      sharedAnswers.map((n) => Math.floor(n)),
      localAnswers.map((n) => Math.floor(n)),
    );
    assert.deepEqual(
      sharedAnswers.map((n) => Math.floor(n)),
      [2, 1, 0, -1, -1],
    );
    assert.equal(h.seen['redis:fallback'], undefined);
    assert.equal(h.seen['redis:response']?.length, 5);
  });

  it('two connections take from one bucket, under the key prefix', async () => {
    const a = connect(server.url);
    const b = connect(server.url);
    await Promise.all([a.redis.started, b.redis.started]);
    const storeA = createRedisRateLimitStore({ redis: a.redis, fallback: createRateLimiter(), events: a.events });
    const storeB = createRedisRateLimitStore({ redis: b.redis, fallback: createRateLimiter(), events: b.events });
    const answers = await Promise.all([
      ...Array.from({ length: 3 }, () => storeA.take('10.0.0.7', SLOW)),
      ...Array.from({ length: 3 }, () => storeB.take('10.0.0.7', SLOW)),
    ]);
    assert.equal(answers.filter((n) => n >= 0).length, 3, `answers ${answers.join(', ')}`);
    const raw = new Redis(server.url, { lazyConnect: true });
    await raw.connect();
    const ttl = await raw.pttl('test:rl:10.0.0.7');
    await raw.quit();
    // The bucket expires when it would be full again (3 tokens at 0.001 a second: 3,000 s).
    assert.ok(ttl > 2_990_000 && ttl <= 3_000_000, `pttl ${ttl}`);
  });

  it('falls back to local buckets when Redis stalls past commandTimeoutMs, then shares again', async () => {
    const h = connect(server.url, { commandTimeoutMs: 50 });
    await h.redis.started;
    const store = createRedisRateLimitStore({ redis: h.redis, fallback: createRateLimiter(), events: h.events });
    server.freeze();
    let left: number;
    let waited: number;
    try {
      const started = performance.now();
      left = await store.take('frozen', SLOW);
      waited = performance.now() - started;
    } finally {
      server.thaw();
    }
    assert.equal(left, 2, 'the local bucket answered');
    assert.ok(waited < 1_000, `answered after ${waited} ms`);
    assert.deepEqual(h.seen['redis:error']?.[0], { use: 'rate-limit', kind: 'timeout' });
    assert.deepEqual(h.seen['redis:fallback']?.[0], { use: 'rate-limit' });
    await h.logged('Redis unavailable');
    // The backoff after a failed command is short; the first answered command ends the outage.
    await waitFor(() => h.redis.isUp, 5_000, 'the end of the backoff');
    assert.equal(Math.floor(await store.take('frozen-after', SLOW)), 2);
    const recovered = await h.logged('Redis available again');
    assert.equal(typeof recovered.outageMs, 'number');
  });
});

/** A mapping call that records itself and answers `json`. */
const call = (calls: string[], json: string) => async (): Promise<MappingOutcome> => {
  calls.push(json);
  return { ok: true, json };
};

describe('shared mapping cache', () => {
  const settings = { enabled: true, ttlSec: 30, maxSize: 100, store: 'redis' as const };

  it('a second replica is served from Redis, byte for byte, without a call', async () => {
    const a = connect(server.url);
    const b = connect(server.url);
    await Promise.all([a.redis.started, b.redis.started]);
    const replicaA = createMappingCache(settings, {
      shared: createRedisMappingStore({ redis: a.redis, events: a.events }),
    });
    const replicaB = createMappingCache(settings, {
      shared: createRedisMappingStore({ redis: b.redis, events: b.events }),
    });
    const json = '{ "name":"Zoë \\u00e9",  "n": 1.50e2 , "emoji":"🎉" }';
    const calls: string[] = [];
    assert.deepEqual(await replicaA.load('http://users/1', call(calls, json)), { ok: true, json });
    // The write is sent in the background: wait for its answer (after the lookup's).
    await waitFor(() => (a.seen['redis:response']?.length ?? 0) >= 2, 5_000, 'the lookup and the write');
    const raw = new Redis(server.url, { lazyConnect: true });
    await raw.connect();
    const ttl = await raw.pttl('test:mc:http://users/1');
    await raw.quit();
    assert.ok(ttl > 25_000 && ttl <= 30_000, `pttl ${ttl}`);
    assert.deepEqual(await replicaB.load('http://users/1', call(calls, 'other')), { ok: true, json });
    assert.deepEqual(calls, [json], 'one call for both replicas');
    assert.equal(replicaB.stats().sharedHits, 1);
    assert.equal(replicaB.stats().misses, 0);
    // Now a local hit on B.
    await replicaB.load('http://users/1', call(calls, 'other'));
    assert.equal(replicaB.stats().hits, 1);
  });

  it('concurrent misses make one Redis lookup and one call per process', async () => {
    const h = connect(server.url);
    await h.redis.started;
    const cache = createMappingCache(settings, {
      shared: createRedisMappingStore({ redis: h.redis, events: h.events }),
    });
    const calls: string[] = [];
    const results = await Promise.all(
      Array.from({ length: 5 }, () => cache.load('http://users/coalesced', call(calls, '[1]'))),
    );
    assert.equal(results.length, 5);
    assert.deepEqual(calls, ['[1]']);
    assert.equal(cache.stats().coalesced, 4);
    // One GET (the script) and one SET.
    await waitFor(() => (h.seen['redis:response']?.length ?? 0) >= 2, 5_000, 'the lookup and the write');
    assert.equal(h.seen['redis:response']?.length, 2);
  });

  it('store local never asks Redis', async () => {
    const h = connect(server.url);
    await h.redis.started;
    const cache = createMappingCache(
      { ...settings, store: 'local' },
      { shared: createRedisMappingStore({ redis: h.redis, events: h.events }) },
    );
    const calls: string[] = [];
    await cache.load('http://users/local', call(calls, '{}'));
    assert.equal(h.seen['redis:response'], undefined);
  });
});

describe('redis killed and restarted', () => {
  it('answers locally at once while Redis is gone, logs the outage once, shares again after a restart', async () => {
    const killed = await startRedis();
    try {
      const h = connect(killed.url);
      await h.redis.started;
      const store = createRedisRateLimitStore({ redis: h.redis, fallback: createRateLimiter(), events: h.events });
      const cache = createMappingCache(
        { enabled: true, ttlSec: 30, maxSize: 100, store: 'redis' },
        { shared: createRedisMappingStore({ redis: h.redis, events: h.events }) },
      );
      assert.equal(Math.floor(await store.take('k', SLOW)), 2);
      await killed.stop();
      await h.logged('Redis unavailable');
      const answers = await takeMany(store, 'k', 4);
      // Local buckets are new: the first three of these are admitted.
      assert.deepEqual(
        answers.map((n) => Math.floor(n)),
        [2, 1, 0, -1],
      );
      const calls: string[] = [];
      assert.deepEqual(await cache.load('http://users/gone', call(calls, '1')), { ok: true, json: '1' });
      assert.deepEqual(calls, ['1']);
      const fallbacks = h.seen['redis:fallback'] ?? [];
      assert.equal(fallbacks.filter((e) => e.use === 'rate-limit').length, 4);
      assert.equal(fallbacks.filter((e) => e.use === 'mapping-cache').length, 1);
      assert.equal(h.logs.filter((l) => String(l.msg).startsWith('Redis unavailable')).length, 1);

      await killed.start();
      await h.logged('Redis available again');
      // A new, empty Redis: the script is loaded again by the client (NOSCRIPT), the bucket is new.
      assert.equal(Math.floor(await store.take('k', SLOW)), 2);
      assert.equal(Math.floor(await store.take('k', SLOW)), 1);
    } finally {
      await killed.stop();
    }
  });
});
