/**
 * What the shared state in Redis costs (docs/redis.md): requests/s and latency through Portico
 * processes that differ only in their stores, measured in one run, in rounds that rotate the
 * variants so that drift (thermal, other load) hits them all alike.
 *
 *   node --import tsx bench/redis-store.ts [--duration 5] [--rounds 3] [--connections 50]
 *
 * Variants: a route without a rate limit, with the local store, with the Redis store (one EVALSHA
 * round trip per request; goal: at least 0.80x the local store's requests/s); and a mapped route
 * (10 items over 5 users) whose mapping results are local cache hits, next to the same route
 * whose local cache holds one entry (maxSize 1) so the other users are found in Redis (goal: p50
 * within 1 ms of the local hits); and a cached route (`cache:`, the 20 KB answer) whose hits come
 * from memory, next to the same route with `cache.redis` and a memory too small to hold the answer,
 * so that every hit is read from Redis (reported: req/s ratio and p50 apart). Gateways are pinned to core 0 when `taskset` exists; the
 * backend, redis-server and the load generator share core 1. Do not run it on a busy machine:
 * the figures go to bench/results/ and docs/redis.md.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  CACHE_DIR,
  ROOT,
  freePort,
  porticoStartArgs,
  startProcess,
  transpileEntry,
  type Started,
} from './lib/processes.js';
import { getLoad, rotateRows, rowFlags } from './lib/rotating-rows.js';
import { startRedis } from '../test/support/redis.js';

interface Variant {
  readonly id: string;
  readonly label: string;
  /** Client path under /api. */
  readonly path: string;
  /** The `config:` lines of the variant, indented by two spaces. */
  readonly config: readonly string[];
}

const NO_LIMIT = ['  rateLimit: { enabled: false }'];
const LIMIT = (store: string) => [`  rateLimit: { enabled: true, requestsPerSec: 1000000000, store: ${store} }`];
const CACHE = (store: string, maxSize: number) => [
  `  mappingCache: { enabled: true, ttlSec: 3600, maxSize: ${maxSize}, store: ${store} }`,
];

const VARIANTS: readonly Variant[] = [
  { id: 'none', label: 'small GET, no rate limit', path: '/small', config: NO_LIMIT },
  { id: 'local', label: 'small GET, rateLimit.store: local', path: '/small', config: LIMIT('local') },
  { id: 'redis', label: 'small GET, rateLimit.store: redis', path: '/small', config: LIMIT('redis') },
  { id: 'map-local', label: 'mapped 10 items, local cache hits', path: '/items', config: CACHE('local', 1000) },
  {
    id: 'map-redis',
    label: 'mapped 10 items, Redis hits (local maxSize 1)',
    path: '/items',
    config: CACHE('redis', 1),
  },
  { id: 'http-local', label: 'cached 20 KB GET, memory hits', path: '/cached', config: [] },
  {
    id: 'http-redis',
    label: 'cached 20 KB GET, Redis hits (cache.maxBytes 1024)',
    path: '/cached',
    config: ['  cache: { maxBytes: 1024, redis: true }'],
  },
];

function yamlFor(v: Variant, backendPort: number, redisUrl: string): string {
  return [
    'routes:',
    `  - { method: GET, route: /small, service: 127.0.0.1:${backendPort}, path: /small }`,
    `  - { method: GET, route: /cached, service: 127.0.0.1:${backendPort}, path: /large, cache: { ttlSec: 3600 } }`,
    `  - method: GET`,
    `    route: /items`,
    `    service: 127.0.0.1:${backendPort}`,
    `    path: "/items?n=10"`,
    `    mapping:`,
    `      - { path: "/users/{userId}", service: 127.0.0.1:${backendPort}, tag: user }`,
    'config:',
    ...v.config,
    '  redis:',
    `    url: ${redisUrl}`,
    `    keyPrefix: "bench-${v.id}:"`,
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const flags = rowFlags();
  const { durationSec, rounds, connections, pinning, loadgen } = flags;

  const started: Started[] = [];
  const redis = await startRedis();
  try {
    const backend = await startProcess({
      name: 'backend',
      command: process.execPath,
      args: [transpileEntry(resolve(ROOT, 'bench/backend.ts')), '0'],
      core: pinning?.loadCore,
      ready: { kind: 'stdout-line' },
    });
    started.push(backend);

    mkdirSync(CACHE_DIR, { recursive: true });
    const gateways: { v: Variant; url: string }[] = [];
    for (const v of VARIANTS) {
      const port = await freePort();
      const file = resolve(CACHE_DIR, `redis-store-${v.id}.yaml`);
      writeFileSync(file, yamlFor(v, backend.port, redis.url));
      const args = porticoStartArgs(file, port);
      started.push(
        await startProcess({
          name: `portico-${v.id}`,
          command: process.execPath,
          args,
          core: pinning?.proxyCore,
          env: { PORTICO_LOG_LEVEL: 'warn' },
          ready: { kind: 'health', port, path: '/health' },
          timeoutMs: 30_000,
        }),
      );
      gateways.push({ v, url: `http://127.0.0.1:${port}/api${v.path}` });
    }

    const byId = new Map(gateways.map((g) => [g.v.id, g.url]));
    const figures = await rotateRows(VARIANTS, {
      rounds,
      durationSec,
      measure: (v, seconds) => getLoad(flags, byId.get(v.id)!, seconds),
    });
    const row = (id: string) => figures.get(id)!;
    const local = row('local');
    const redisRow = row('redis');
    const mapLocal = row('map-local');
    const mapRedis = row('map-redis');
    const httpLocal = row('http-local');
    const httpRedis = row('http-redis');
    const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
    const lines = [
      `# Redis stores (${new Date().toISOString().slice(0, 10)}, ${commit})`,
      '',
      `Node ${process.version}, ${loadgen}, ${connections} connections, ${rounds} rounds x ${durationSec} s per variant, rotating;`,
      `${pinning ? `gateways on core ${pinning.proxyCore}, backend, redis-server and load on core ${pinning.loadCore}` : 'no CPU pinning'}.`,
      '',
      '| variant | median req/s | p50 ms | p99 ms | errors + non-2xx |',
      '|---|---|---|---|---|',
      ...VARIANTS.map((v) => {
        const x = row(v.id);
        return `| ${v.label} | ${Math.round(x.rps)} | ${x.p50} | ${x.p99} | ${x.bad} |`;
      }),
      '',
      `Rate limit, redis / local: ${(redisRow.rps / local.rps).toFixed(3)}x req/s (goal >= 0.80).`,
      `Mapped route, Redis hit vs local hit: p50 ${(mapRedis.p50 - mapLocal.p50).toFixed(2)} ms apart (goal <= 1 ms).`,
      `HTTP cache, Redis hit / memory hit: ${(httpRedis.rps / httpLocal.rps).toFixed(3)}x req/s, p50 ${(httpRedis.p50 - httpLocal.p50).toFixed(2)} ms apart.`,
      '',
    ];
    process.stdout.write(lines.join('\n'));
  } finally {
    for (const s of started.reverse()) await s.stop();
    await redis.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
