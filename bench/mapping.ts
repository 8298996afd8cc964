/**
 * The mapping benchmark: `node --import tsx bench/mapping.ts [--duration S] [--connections N]`.
 *
 * A route returns 100 items; two rules (path style `/users/{authorId}`, query style
 * `/comments?postId={groupId}`) with 10 distinct values each; every local backend answers after a
 * fixed 20 ms. The ideal latency is one primary round trip plus one mapping round trip (~40 ms):
 * all 20 distinct calls of a response run concurrently. One run reports
 *   - p50/p99 of the mapped route at low concurrency (cache off) against the ideal, measured
 *     straight on the backends; goal: p50 within 1.25x of the ideal;
 *   - requests/s (and p50/p99) under load with the cache off and on; goal: on >= 5x off.
 * Three processes: backends, gateways (cache off and cache on, one port each) and the load
 * generator (this one); pinned to different cores when `taskset` exists.
 * The same workload also runs inside `npm run bench` as the `mapping` scenario (`benchScenarios`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchScenario } from './lib/scenarios.js';

const DELAY_MS = 20;
const ITEMS = 100;
const DISTINCT = 10;

/**
 * The same workload inside `npm run bench` (bench/lib/scenarios.ts hook): bench/backend.ts serves
 * 100 items whose `authorId` and `groupId` take 10 values each, every call slowed to 20 ms by the
 * `/delay/20` prefix; two rules (path and query style). Measured on Portico with the mapping
 * cache off (`portico`) and on (`portico-mapcache`), and on the backend alone (the primary call
 * without mapping: the floor of the latency). Run: `npm run bench -- --scenarios mapping`.
 */
export const benchScenarios: BenchScenario[] = [
  {
    id: 'mapping',
    title: `mapped GET (${ITEMS} items, 2 rules x ${DISTINCT} distinct values, backends answer after ${DELAY_MS} ms)`,
    method: 'GET',
    path: `/delay/${DELAY_MS}/items?n=${ITEMS}`,
    portico: {
      route: '/mapped-items',
      path: `/delay/${DELAY_MS}/items?n=${ITEMS}`,
      mapping: [
        { path: `/delay/${DELAY_MS}/users/{authorId}`, service: 'BACKEND', tag: 'author', removeKeyMapping: true },
        { path: `/delay/${DELAY_MS}/comments?postId={groupId}`, service: 'BACKEND', tag: 'comments' },
      ],
    },
    candidates: ['backend', 'portico', 'portico-mapcache'],
    notApplicable: {
      'node-floor': 'cannot map responses (a plain proxy)',
      fastify: 'cannot map responses (a plain proxy)',
    },
  },
];

// ---- role: backends -------------------------------------------------------------------------

async function serveBackends(): Promise<void> {
  const posts = JSON.stringify(
    Array.from({ length: ITEMS }, (_, i) => ({
      id: i,
      title: `Post ${i}`,
      authorId: i % DISTINCT,
      groupId: (i * 7) % DISTINCT,
      views: 1000 + i,
    })),
  );
  const listen = (handler: (url: string) => string) => {
    const server = createServer((req, res) => {
      const body = handler(req.url ?? '/');
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      }, DELAY_MS);
    });
    server.keepAliveTimeout = 60_000;
    return new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
    );
  };
  const ports = {
    posts: await listen(() => posts),
    users: await listen((url) =>
      JSON.stringify({ id: url.split('/')[2], name: `User ${url.split('/')[2]}`, email: 'user@example.com' }),
    ),
    comments: await listen((url) =>
      JSON.stringify([
        { postId: url.split('=')[1], body: 'Nice post.' },
        { postId: url.split('=')[1], body: 'Agreed.' },
      ]),
    ),
  };
  process.stdout.write(JSON.stringify({ ready: true, ports }) + '\n');
}

// ---- role: gateways -------------------------------------------------------------------------

async function serveGateways(ports: { posts: number; users: number; comments: number }): Promise<void> {
  const { loadConfigText } = await import('../src/config/load.js');
  const { createGateway } = await import('../src/gateway.js');
  const { createLogger } = await import('../src/observability/logger.js');
  const yaml = (cache: boolean) => `
routes:
  - method: GET
    route: /posts
    service: 127.0.0.1:${ports.posts}
    path: /posts
    mapping:
      - path: "/users/{authorId}"
        service: 127.0.0.1:${ports.users}
        tag: author
        removeKeyMapping: true
      - path: "/comments?postId={groupId}"
        service: 127.0.0.1:${ports.comments}
        tag: comments
config:
  mappingCache:
    enabled: ${cache}
`;
  const out: Record<string, number> = {};
  for (const cache of [false, true]) {
    const loaded = loadConfigText(yaml(cache), `bench-cache-${cache}.yaml`);
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const gw = createGateway({ config: loaded.config, logger: createLogger({ level: 'error' }) });
    let failures = 0;
    gw.events.on('mapping:fail', () => failures++);
    process.on('SIGUSR2', () =>
      process.stderr.write(
        `cache ${cache}: ${failures} mapping failures, ${JSON.stringify(gw.mappingCache.stats())}\n`,
      ),
    );
    out[cache ? 'on' : 'off'] = (await gw.listen(0, '127.0.0.1')).port;
  }
  process.stdout.write(JSON.stringify({ ready: true, ports: out }) + '\n');
}

// ---- role: load generator -------------------------------------------------------------------

interface Histogram {
  readonly average: number;
  readonly p50: number;
  readonly p99: number;
}
interface AutocannonResult {
  readonly latency: Histogram;
  readonly requests: Histogram & { readonly total: number };
  readonly duration: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
}
type Autocannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  pipelining?: number;
}) => Promise<AutocannonResult>;
// autocannon ships no types; this is the slice of its API used here.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const self = fileURLToPath(import.meta.url);
let pinnable: boolean | undefined;
// Asked on first use, not at import (bench/run.ts imports this file).
const canPin = () =>
  (pinnable ??=
    availableParallelism() >= 2 && spawnSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' }).status === 0);

function startRole<T>(role: string, arg: string, core: number): Promise<{ child: ChildProcess; info: T }> {
  const args = ['--import', 'tsx', self, role, arg];
  const child = canPin()
    ? spawn('taskset', ['-c', String(core), process.execPath, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${role} exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', (line) =>
      resolve({ child, info: (JSON.parse(line) as { ports: T }).ports }),
    );
  });
}

async function load(url: string, connections: number, duration: number): Promise<AutocannonResult> {
  const r = await autocannon({ url, connections, duration, pipelining: 1 });
  if (r.errors > 0 || r.non2xx > 0)
    process.stderr.write(`  ! ${url}: ${r.errors} errors, ${r.non2xx} non-2xx, ${r.timeouts} timeouts\n`);
  return r;
}

const ms = (n: number) => `${n.toFixed(1)} ms`;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const flag = (name: string, fallback: number) => {
    const i = argv.indexOf(name);
    return i >= 0 ? Number(argv[i + 1]) : fallback;
  };
  const duration = flag('--duration', 10);
  const connections = flag('--connections', 64);
  const latencyConnections = flag('--latency-connections', 1);

  // Backends and load generator share one core, the gateway gets the other.
  const backends = await startRole<{ posts: number; users: number; comments: number }>('--role-backends', '-', 1);
  const gateways = await startRole<{ off: number; on: number }>('--role-gateways', JSON.stringify(backends.info), 0);
  try {
    const off = `http://127.0.0.1:${gateways.info.off}/api/posts`;
    const on = `http://127.0.0.1:${gateways.info.on}/api/posts`;
    // Sanity: every item carries both tags.
    const sample = (await (await fetch(off)).json()) as { author?: unknown; comments?: unknown }[];
    if (sample.length !== ITEMS || !sample.every((i) => i.author !== undefined && i.comments !== undefined))
      throw new Error('the mapped route does not enrich every item');

    process.stderr.write('warming up...\n');
    await load(off, 8, 2);
    await load(on, 8, 2);

    process.stderr.write('ideal: primary and one mapping call, straight on the backends...\n');
    const primary = await load(
      `http://127.0.0.1:${backends.info.posts}/posts`,
      latencyConnections,
      Math.max(3, duration / 2),
    );
    const mapping = await load(
      `http://127.0.0.1:${backends.info.users}/users/1`,
      latencyConnections,
      Math.max(3, duration / 2),
    );
    const ideal = primary.latency.p50 + mapping.latency.p50;

    process.stderr.write(`latency: mapped route, cache off, ${latencyConnections} connection(s)...\n`);
    const lat = await load(off, latencyConnections, duration);
    process.stderr.write(`throughput: cache off, ${connections} connections...\n`);
    const tOff = await load(off, connections, duration);
    process.stderr.write(`throughput: cache on, ${connections} connections...\n`);
    const tOn = await load(on, connections, duration);
    gateways.child.kill('SIGUSR2');

    const ratio = lat.latency.p50 / ideal;
    const speedup = tOn.requests.average / tOff.requests.average;
    const lines = [
      `# Mapping benchmark (${ITEMS} items, 2 rules x ${DISTINCT} distinct values, backends answer after ${DELAY_MS} ms)`,
      `node ${process.version}, ${availableParallelism()} cores, pinned: ${canPin() ? 'gateway core 0, backends + load core 1' : 'no'}, ${duration} s per measurement`,
      '',
      '| measurement | p50 | p99 | req/s |',
      '|---|---|---|---|',
      `| primary backend alone (${latencyConnections} conn) | ${ms(primary.latency.p50)} | ${ms(primary.latency.p99)} | ${primary.requests.average.toFixed(0)} |`,
      `| one mapping call alone (${latencyConnections} conn) | ${ms(mapping.latency.p50)} | ${ms(mapping.latency.p99)} | ${mapping.requests.average.toFixed(0)} |`,
      `| **ideal** (primary p50 + mapping p50; nominal 40 ms) | ${ms(ideal)} | | |`,
      `| mapped route, cache off (${latencyConnections} conn) | ${ms(lat.latency.p50)} | ${ms(lat.latency.p99)} | ${lat.requests.average.toFixed(0)} |`,
      `| mapped route, cache off (${connections} conn) | ${ms(tOff.latency.p50)} | ${ms(tOff.latency.p99)} | ${tOff.requests.average.toFixed(0)} |`,
      `| mapped route, cache on (${connections} conn) | ${ms(tOn.latency.p50)} | ${ms(tOn.latency.p99)} | ${tOn.requests.average.toFixed(0)} |`,
      '',
      `p50 / ideal (cache off): ${ratio.toFixed(2)}x (goal <= 1.25x: ${ratio <= 1.25 ? 'met' : 'NOT met'})`,
      `req/s cache on / cache off: ${speedup.toFixed(1)}x (goal >= 5x: ${speedup >= 5 ? 'met' : 'NOT met'})`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
    await new Promise((r) => setTimeout(r, 200));
  } finally {
    gateways.child.kill('SIGTERM');
    backends.child.kill('SIGTERM');
  }
}

// Run only when started as a script: bench/run.ts imports this file for `benchScenarios`.
if (process.argv[1] !== undefined && self === resolve(process.argv[1])) {
  const role = process.argv[2];
  if (role === '--role-backends') await serveBackends();
  else if (role === '--role-gateways')
    await serveGateways(JSON.parse(process.argv[3]!) as { posts: number; users: number; comments: number });
  else await main();
}
