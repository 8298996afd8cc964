/**
 * Replicas sharing one real Redis (docs/redis.md): three gateway processes let the configured
 * rate through in total, the shared mapping cache serves a second replica without a service call,
 * a Redis killed under load costs no request (fallback logged and counted) and sharing resumes
 * after a restart, `redis.required` holds /ready, `--workers` share the buckets, and a wrong
 * password or host is a clear error at start (`check`'s messages are golden files,
 * test/fixtures/check/redis-*).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { startPortico, type PorticoProcess } from '../support/cli-process.js';
import { FAKE_DNS_NODE_OPTIONS, runPortico } from '../support/cli-run.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { get as getReply } from '../support/http.js';
import { waitFor } from '../support/wait-for.js';

/** A new connection each time, so the cluster's round robin spreads requests over workers. */
const get = (url: string) => getReply(url, { reset: true });

/** The value of an unlabelled (or first matching) sample in Prometheus text. */
function sample(metrics: string, name: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(name + ' ') || l.startsWith(name + '{'));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** `redis.commandTimeoutMs` for tests: generous, the machine is shared with other test files. */
const COMMAND_TIMEOUT_MS = 5_000;

function redisYaml(url: string, extra = ''): string {
  return `  redis:\n    url: "${url}"\n    commandTimeoutMs: ${COMMAND_TIMEOUT_MS}\n${extra}`;
}

let redis: TestRedis;
let backend: TestBackend;
let dir: string;
before(async () => {
  redis = await startRedis({ password: 'shared-secret' });
  backend = await startBackend((req, res) => json(res, 200, { url: req.url }));
  dir = mkdtempSync(join(tmpdir(), 'portico-redis-'));
});
after(async () => {
  await redis?.stop();
  await backend?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Rate 0.1/s: the refill during a test is far below one token, so a burst is exact. */
function limitedYaml(store: 'local' | 'redis', keyPrefix: string): string {
  return `routes:
  - { method: GET, route: /limited, service: ${backend.host}, path: /limited }
config:
  rateLimit: { enabled: true, requestsPerSec: 0.1, burst: 6, store: ${store} }
${redisYaml('${REDIS_URL}', `    keyPrefix: "${keyPrefix}"\n`)}`;
}

describe('shared rate limits', () => {
  it('three gateway processes let one burst through in total; local buckets let three', async () => {
    const file = join(dir, 'three.yaml');
    writeFileSync(file, limitedYaml('redis', 'three:'));
    const env = { REDIS_URL: redis.url };
    const gateways: PorticoProcess[] = [];
    try {
      // One after the other: three processes starting at once on a loaded machine start slowly.
      for (let i = 0; i < 3; i++) gateways.push(await startPortico(['--config', file], env));
      const statuses: number[] = [];
      for (let round = 0; round < 6; round++)
        for (const g of gateways) statuses.push((await get(`${g.url}/api/limited`)).status);
      assert.equal(statuses.filter((s) => s === 200).length, 6, `statuses ${statuses.join(' ')}`);
      assert.equal(statuses.filter((s) => s === 429).length, 12);
      const refused = await get(`${gateways[0]!.url}/api/limited`);
      assert.equal(refused.status, 429);
      assert.deepEqual(refused.json(), { error: 'Too many requests', success: false });
      assert.equal(refused.headers['ratelimit-limit'], '6');
      assert.equal(refused.headers['ratelimit-remaining'], '0');
      assert.ok(Number(refused.headers['retry-after']) >= 1);
    } finally {
      for (const g of gateways) g.child.kill('SIGTERM');
      await Promise.all(gateways.map((g) => g.exited));
    }

    // The same configuration with local buckets: each replica admits its own burst.
    const local: TestGateway[] = [];
    try {
      for (let i = 0; i < 3; i++) local.push(await startGateway(limitedYaml('local', 'three-local:'), env));
      let admitted = 0;
      for (let round = 0; round < 6; round++)
        for (const g of local) if ((await get(`${g.url}/api/limited`)).status === 200) admitted++;
      assert.equal(admitted, 18);
    } finally {
      await Promise.all(local.map((g) => g.close()));
    }
  });

  it('--workers 2 take from the shared buckets too', async () => {
    const file = join(dir, 'workers.yaml');
    writeFileSync(file, limitedYaml('redis', 'workers:'));
    const p = await startPortico(['--config', file, '--workers', '2'], { REDIS_URL: redis.url });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 14; i++) statuses.push((await get(`${p.url}/api/limited`)).status);
      assert.equal(statuses.filter((s) => s === 200).length, 6, `statuses ${statuses.join(' ')}`);
      const raw = new Redis(redis.url, { lazyConnect: true });
      await raw.connect();
      const keys = await raw.keys('workers:rl:*');
      await raw.quit();
      assert.deepEqual(keys, ['workers:rl:127.0.0.1']);
    } finally {
      p.child.kill('SIGTERM');
      await p.exited;
    }
  });
});

describe('shared mapping cache', () => {
  it('a second replica is served from Redis without a service call', async () => {
    const users = await startBackend((req, res) => json(res, 200, { id: req.url, name: 'Zoë' }));
    const yaml = `routes:
  - { method: GET, route: "/orders/{id}", service: ${backend.host}, path: "/orders/{id}",
      mapping: [{ path: "/users/{url}", service: ${users.host}, tag: user }] }
config:
  mappingCache: { enabled: true, ttlSec: 60, store: redis }
${redisYaml(redis.url, '    keyPrefix: "cache:"\n')}`;
    const a = await startGateway(yaml);
    const b = await startGateway(yaml);
    let answeredOnA = 0;
    a.gateway.events.on('redis:response', () => answeredOnA++);
    try {
      // Until its connection is ready a replica skips Redis (docs/redis.md): wait for both.
      await Promise.all([a.gateway.redis!.started, b.gateway.redis!.started]);
      const first = (await get(`${a.url}/api/orders/7`)).json() as { user?: unknown };
      assert.deepEqual(first.user, { id: '/users/%2Forders%2F7', name: 'Zoë' });
      assert.equal(users.seen.length, 1);
      // The write to Redis is sent in the background: wait for its answer (after the lookup's).
      await waitFor(() => answeredOnA >= 2, 10_000, 'the lookup and the write on replica a');
      const second = (await get(`${b.url}/api/orders/7`)).json() as { user?: unknown };
      assert.deepEqual(second.user, first.user);
      assert.equal(users.seen.length, 1, 'replica b made no call');
      const metrics = (await get(`${b.url}/metrics`)).text;
      assert.equal(sample(metrics, 'portico_mapping_cache_shared_hits_total'), 1);
      assert.equal(sample(metrics, 'portico_mapping_cache_misses_total'), 0);
      assert.ok(sample(metrics, 'portico_redis_duration_seconds_count') >= 1);
    } finally {
      await Promise.all([a.close(), b.close(), users.close()]);
    }
  });
});

describe('Redis killed and restarted under load', () => {
  it('no request fails, the outage is logged once and counted, sharing resumes after the restart', async () => {
    const own = await startRedis();
    const yaml = `routes:
  - { method: GET, route: /busy, service: ${backend.host}, path: /busy }
config:
  rateLimit: { enabled: true, requestsPerSec: 0.001, burst: 100000, store: redis }
${redisYaml(own.url)}`;
    const gw = await startGateway(yaml);
    try {
      await gw.gateway.redis!.started;
      const failures: number[] = [];
      let sent = 0;
      let killed: Promise<void> | undefined;
      const lane = async () => {
        while (sent < 300) {
          sent++;
          if (sent === 100) killed = own.stop();
          const { status } = await get(`${gw.url}/api/busy`);
          if (status !== 200) failures.push(status);
        }
      };
      await Promise.all([lane(), lane(), lane(), lane()]);
      await killed;
      assert.deepEqual(failures, [], 'every request answered 200');
      const outage = gw.logs.filter((l) => String(l.msg).startsWith('Redis unavailable'));
      assert.equal(outage.length, 1, 'the outage is logged once');
      const metrics = (await get(`${gw.url}/metrics`)).text;
      assert.ok(sample(metrics, 'portico_redis_fallbacks_total{use="rate-limit"}') > 0, 'fallbacks counted');
      assert.equal(sample(metrics, 'portico_redis_up'), 0);

      await own.start();
      // Reconnection is the client's (backoff at most 2 s): wait for the line that says it is back.
      await waitFor(
        () => gw.logs.some((l) => String(l.msg).startsWith('Redis available again')),
        15_000,
        'the recovery line',
      );
      assert.equal((await get(`${gw.url}/api/busy`)).status, 200);
      const raw = new Redis(own.url, { lazyConnect: true });
      await raw.connect();
      const keys = await raw.keys('portico:rl:*');
      await raw.quit();
      assert.deepEqual(keys, ['portico:rl:127.0.0.1'], 'the bucket is in the restarted Redis');
    } finally {
      await gw.close();
      await own.stop();
    }
  });
});

describe('redis.required', () => {
  it('/ready answers 503 while Redis is unreachable and 200 once it is back', async () => {
    const own = await startRedis();
    await own.stop();
    const gw = await startGateway(`routes: []\nconfig:\n${redisYaml(own.url, '    required: true\n')}`);
    try {
      const waiting = await get(`${gw.url}/ready`);
      assert.equal(waiting.status, 503);
      assert.deepEqual(waiting.json(), { status: 'waiting for redis' });
      assert.equal((await get(`${gw.url}/health`)).status, 200);
      await own.start();
      await waitFor(() => gw.gateway.redis!.isConnected, 15_000, 'the reconnection');
      assert.equal((await get(`${gw.url}/ready`)).status, 200);
    } finally {
      await gw.close();
      await own.stop();
    }
  });

  it('without it /ready stays 200 while Redis is unreachable', async () => {
    const own = await startRedis();
    await own.stop();
    const gw = await startGateway(`routes: []\nconfig:\n${redisYaml(own.url)}`);
    try {
      assert.equal((await get(`${gw.url}/ready`)).status, 200);
    } finally {
      await gw.close();
    }
  });
});

describe('wrong settings are clear errors', () => {
  it('start refuses a wrong password, naming the URL without it', async () => {
    const file = join(dir, 'wrong-password.yaml');
    writeFileSync(file, `routes: []\nconfig:\n${redisYaml('redis://:${REDIS_PASSWORD}@127.0.0.1:' + redis.port)}`);
    const run = await runPortico(['start', '--config', file, '--port', '0'], {
      env: { REDIS_PASSWORD: 'not-the-password' },
    });
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /^portico: refusing to start: Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+: authentication failed .*check the user and password in config\.redis\.url\n$/,
    );
    assert.doesNotMatch(run.stderr, /not-the-password/);
  });

  it('start --workers refuses an unknown host once, before forking', async () => {
    const file = join(dir, 'unknown-host.yaml');
    writeFileSync(file, `routes: []\nconfig:\n${redisYaml('redis://redis.invalid:6379')}`);
    const run = await runPortico(['start', '--config', file, '--port', '0', '--workers', '2'], {
      env: { NODE_OPTIONS: FAKE_DNS_NODE_OPTIONS },
    });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^portico: refusing to start: Redis at redis:\/\/redis\.invalid:6379: host not found/);
  });
});
