/**
 * Two replicas sharing one Redis agree on a consumer's quota (docs/consumers.md#quotas): two
 * Portico processes with the same daily quota for one token subject, `quotas.store: redis` on a
 * real redis-server, loaded through both at once for `--duration` seconds. The requests admitted
 * by both together are compared with the quota (goal: within 1%), and with the count Redis holds.
 *
 *   node --import tsx bench/quota-replicas.ts [--duration 60] [--quota 20000] [--connections 32]
 *        [--command-timeout-ms 50] [--quota-timeout-ms 1000]
 *
 * `--command-timeout-ms` is `redis.commandTimeoutMs` (the rate limits' and mapping cache's
 * connection), `--quota-timeout-ms` is `quotas.redisCommandTimeoutMs` (the quotas' own
 * connection, which decides here); both default to the gateway's defaults.
 *
 * Choose `--quota` below what both replicas answer in `--duration` (the report says how many
 * requests were sent), so that the quota is used up under load and the refusals that follow are
 * part of the run. The load is this process's own (undici, `--connections` per replica), so that
 * every answer's status is counted; gateways are pinned to core 0 when `taskset` exists, the
 * backend, redis-server and the load share core 1. Do not run it on a busy machine.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { SignJWT } from 'jose';
import { Redis } from 'ioredis';
import {
  CACHE_DIR,
  ROOT,
  detectPinning,
  freePort,
  porticoStartArgs,
  startProcess,
  transpileEntry,
  type Started,
} from './lib/processes.js';
import { startRedis } from '../test/support/redis.js';

const SECRET = 'quota-replicas-bench-secret-0123456789abcdef';
const SUBJECT = 'bench-consumer';
const KEY_PREFIX = 'bench-quota:';

interface Timeouts {
  readonly commandTimeoutMs: number;
  readonly quotaTimeoutMs: number;
}

function yaml(backendPort: number, redisUrl: string, quota: number, timeouts: Timeouts): string {
  const { commandTimeoutMs, quotaTimeoutMs } = timeouts;
  return [
    'routes:',
    `  - { method: GET, route: /small, service: 127.0.0.1:${backendPort}, path: /small, protected: true }`,
    'config:',
    `  auth: { secret: ${SECRET} }`,
    `  quotas: { key: claims.sub, day: ${quota}, store: redis, redisCommandTimeoutMs: ${quotaTimeoutMs} }`,
    // required: /ready waits for the connection, so no request is decided before it is up.
    `  redis: { url: "${redisUrl}", keyPrefix: "${KEY_PREFIX}", commandTimeoutMs: ${commandTimeoutMs}, required: true }`,
    '',
  ].join('\n');
}

interface Counts {
  sent: number;
  admitted: number;
  refused: number;
  other: number;
  errors: number;
}

/** `connections` loops of one request at a time each, on one pool, until `deadline`. */
async function load(url: string, headers: Record<string, string>, connections: number, deadline: number) {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections, pipelining: 1 });
  const counts: Counts = { sent: 0, admitted: 0, refused: 0, other: 0, errors: 0 };
  const loop = async () => {
    while (performance.now() < deadline) {
      counts.sent++;
      try {
        const res = await pool.request({ path: u.pathname, method: 'GET', headers });
        await res.body.dump();
        if (res.statusCode === 200) counts.admitted++;
        else if (res.statusCode === 429) counts.refused++;
        else counts.other++;
      } catch {
        counts.errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  await pool.close();
  return counts;
}

/** `portico_redis_fallbacks_total{use="quota"}` of a replica: its decisions made with local counters. */
async function quotaFallbacks(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('portico_redis_fallbacks_total{use="quota"}'));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '60' },
      quota: { type: 'string', default: '20000' },
      connections: { type: 'string', default: '32' },
      'command-timeout-ms': { type: 'string', default: '50' },
      'quota-timeout-ms': { type: 'string', default: '1000' },
    },
  });
  const durationSec = Number(values.duration);
  const quota = Number(values.quota);
  const connections = Number(values.connections);
  const commandTimeoutMs = Number(values['command-timeout-ms']);
  const quotaTimeoutMs = Number(values['quota-timeout-ms']);
  const pinning = detectPinning(true);

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
    const file = resolve(CACHE_DIR, 'quota-replicas.yaml');
    writeFileSync(file, yaml(backend.port, redis.url, quota, { commandTimeoutMs, quotaTimeoutMs }));
    const urls: string[] = [];
    for (const name of ['a', 'b']) {
      const port = await freePort();
      started.push(
        await startProcess({
          name: `portico-${name}`,
          command: process.execPath,
          args: porticoStartArgs(file, port),
          core: pinning?.proxyCore,
          env: { PORTICO_LOG_LEVEL: 'warn' },
          ready: { kind: 'health', port, path: '/ready' },
          timeoutMs: 30_000,
        }),
      );
      urls.push(`http://127.0.0.1:${port}`);
    }

    const token = await new SignJWT({ sub: SUBJECT })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(SECRET));
    const headers = { authorization: `Bearer ${token}` };
    const dayStart = Math.floor(Date.now() / 86_400_000) * 86_400;
    const deadline = performance.now() + durationSec * 1000;
    const [a, b] = await Promise.all(urls.map((url) => load(`${url}/api/small`, headers, connections, deadline)));
    const fallbacks = await Promise.all(urls.map(quotaFallbacks));
    // The run must stay inside one UTC day, else it counted in two windows.
    const sameDay = Math.floor(Date.now() / 86_400_000) * 86_400 === dayStart;

    const raw = new Redis(redis.url);
    const inRedis = Number(await raw.get(`${KEY_PREFIX}q:claim:${SUBJECT}|day:${dayStart}`));
    raw.disconnect();

    const admitted = a!.admitted + b!.admitted;
    const sent = a!.sent + b!.sent;
    const deviation = Math.abs(admitted - quota) / quota;
    const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
    const row = (name: string, c: Counts) =>
      `| ${name} | ${c.sent} | ${c.admitted} | ${c.refused} | ${c.other} | ${c.errors} |`;
    const lines = [
      `# Quota shared by two replicas (${new Date().toISOString().slice(0, 10)}, ${commit})`,
      '',
      `Node ${process.version}, ${durationSec} s, ${connections} connections per replica, daily quota ${quota};`,
      `${pinning ? `gateways on core ${pinning.proxyCore}, backend, redis-server and load on core ${pinning.loadCore}` : 'no CPU pinning'}.`,
      '',
      '| replica | sent | 200 | 429 | other | errors |',
      '|---|---|---|---|---|---|',
      row('a', a!),
      row('b', b!),
      '',
      `Admitted by both: ${admitted} of a quota of ${quota} (${(deviation * 100).toFixed(2)}% apart; goal <= 1%).`,
      `Counted in Redis: ${inRedis}. Decisions made without Redis (quotas.redisCommandTimeoutMs ${quotaTimeoutMs}, redis.commandTimeoutMs ${commandTimeoutMs}): ${fallbacks.join(' + ')}.`,
      ...(sent <= quota ? [`WARNING: only ${sent} requests sent: the quota was never used up; lower --quota.`] : []),
      ...(sameDay ? [] : ['WARNING: the run crossed midnight UTC: two daily windows were counted.']),
      '',
    ];
    process.stdout.write(lines.join('\n'));
    if (deviation > 0.01 || admitted !== inRedis) process.exitCode = 1;
  } finally {
    for (const s of started.reverse()) await s.stop();
    await redis.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
