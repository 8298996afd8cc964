/**
 * What a cache hit costs (docs/caching.md, "Speed"): Portico answering the small (~400 B) and the
 * 20 KB JSON from its cache, next to the Node floor proxying them (bench/node-floor.ts: every
 * request goes to the backend) and nginx `proxy_cache` hits as the reference row.
 *
 *   npm run bench:cache -- [--duration 5] [--rounds 3] [--connections 50] [--out FILE]
 *
 * The backend is nginx (one worker on the load core) sending the bodies with
 * `Cache-Control: public, max-age=3600`; its `stub_status` counts the requests it served, so each
 * row reports how many reached it: none for a hit row once the warm-up stored the answer.
 * Portico and nginx `proxy_cache` run on the proxy core, as the Node floor does. Portico also
 * serves both bodies on routes without `cache:` ("Portico, proxied") for what a hit saves. The
 * ceiling row is plain node:http answering the same bodies from memory with the head a hit sends
 * (bench/node-memory.ts), on the proxy core too: a hit can come near it, not pass it.
 * Goal (issue "Response caching and compression"): a hit serves >= 1.8x the floor's requests/s.
 *
 * Then request collapsing: 100 concurrent requests for one new URL of a route whose backend (a
 * Node server in this process) answers after 200 ms make one backend request; the others wait for
 * it and are answered from the store (`Cache-Status: ...; detail=collapsed`).
 * Rounds rotate the rows so that drift hits them all alike; medians of the rounds.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import {
  CACHE_DIR,
  ROOT,
  freePort,
  porticoStartArgs,
  startProcess,
  transpileEntry,
  type Started,
} from './lib/processes.js';
import { loadGeneratorVersion } from './lib/load.js';
import { getLoad, rotateRows, rowFlags } from './lib/rotating-rows.js';
import { findNginx, nginxVersion } from './lib/nginx.js';
import { describeMachine } from './lib/machine.js';
import { emitResults, runBench } from './lib/report.js';
import { jsonOfSize } from './lib/scenarios.js';

const BODIES = { small: jsonOfSize(400), large: jsonOfSize(20 * 1024) } as const;
type Body = keyof typeof BODIES;
const GOAL = 1.8;
const COLLAPSE_CLIENTS = 100;
const SLOW_MS = 200;

interface Row {
  readonly id: string;
  readonly label: string;
  readonly body: Body;
  /** Base URL; requests go to `${base}/api/${body}`. */
  readonly base: string;
  /** Path segment before the body name (Portico's uncached routes are `/api/plain-small`...). */
  readonly prefix?: string;
}

/** The backend: the two bodies with a long freshness, and the count of what it served. */
function backendConf(dir: string, port: number): string {
  const locations = (Object.keys(BODIES) as Body[]).map((name) => {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, BODIES[name]);
    chmodSync(file, 0o644);
    return `    location = /${name} { alias ${file}; add_header Cache-Control "public, max-age=3600"; }`;
  });
  return `daemon off;
worker_processes 1;
pid ${join(dir, 'backend.pid')};
error_log ${join(dir, 'backend-error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  server_tokens off;
  default_type application/json;
  etag off;
  keepalive_timeout 120s;
  keepalive_requests 100000000;
  tcp_nodelay on;
  open_file_cache max=16 inactive=600s;
  server {
    listen 127.0.0.1:${port};
${locations.join('\n')}
    location = /status { stub_status; }
  }
}
`;
}

/** The reference: nginx `proxy_cache` in front of the same backend, the `/api` prefix stripped like the others. */
function cachingProxyConf(dir: string, port: number, backendPort: number): string {
  mkdirSync(join(dir, 'cache'), { recursive: true });
  chmodSync(join(dir, 'cache'), 0o777);
  return `daemon off;
worker_processes 1;
pid ${join(dir, 'proxy.pid')};
error_log ${join(dir, 'proxy-error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  server_tokens off;
  keepalive_timeout 120s;
  keepalive_requests 100000000;
  tcp_nodelay on;
  proxy_cache_path ${join(dir, 'cache')} levels=1:2 keys_zone=bench:10m max_size=100m inactive=60m use_temp_path=off;
  upstream backend { server 127.0.0.1:${backendPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location /api/ {
      proxy_pass http://backend/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache bench;
      proxy_cache_lock on;
      add_header Cache-Status $upstream_cache_status;
    }
  }
}
`;
}

async function main(): Promise<void> {
  const flags = rowFlags();
  const { durationSec, rounds, connections, pinning, loadgen } = flags;
  const nginx = findNginx();
  if (nginx === undefined) throw new Error('nginx is needed as the backend (apt-get install -y nginx)');
  const started: Started[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'portico-bench-cache-'));
  chmodSync(dir, 0o755);
  let backendCalls = 0;
  const slow = createServer((_req, res) => {
    backendCalls++;
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=3600' });
      res.end(BODIES.small);
    }, SLOW_MS);
  });
  try {
    let backendPort = 0;
    const nginxAt = async (name: 'backend' | 'proxy', core: number | undefined, path: string) => {
      const port = await freePort();
      const file = join(dir, `${name}.conf`);
      writeFileSync(file, name === 'backend' ? backendConf(dir, port) : cachingProxyConf(dir, port, backendPort));
      started.push(
        await startProcess({
          name: `nginx ${name}`,
          command: nginx,
          args: ['-p', dir, '-e', join(dir, `${name}-error.log`), '-c', file],
          core,
          ready: { kind: 'health', port, path },
          stdout: 'ignore',
        }),
      );
      return port;
    };
    backendPort = await nginxAt('backend', pinning?.loadCore, '/status');
    const backend = `http://127.0.0.1:${backendPort}`;
    /**
     * The backend's count once it stopped moving: calls a proxy still had in flight when the last
     * row's load ended are counted before the next row, not in it. Each read counts itself.
     */
    const served = async () => {
      let last = await statusRequests(backend);
      for (;;) {
        await new Promise((done) => setTimeout(done, 50));
        const now = await statusRequests(backend);
        if (now === last + 1) return now;
        last = now;
      }
    };
    await new Promise<void>((done) => slow.listen(0, '127.0.0.1', done));
    const slowPort = (slow.address() as AddressInfo).port;

    mkdirSync(CACHE_DIR, { recursive: true });
    const file = resolve(CACHE_DIR, 'cache-bench.yaml');
    writeFileSync(
      file,
      `config:
  limits: { connectionsPerOrigin: 256 }
routes:
  - { method: GET, route: /small, service: 127.0.0.1:${backendPort}, path: /small, cache: true }
  - { method: GET, route: /large, service: 127.0.0.1:${backendPort}, path: /large, cache: true }
  - { method: GET, route: /plain-small, service: 127.0.0.1:${backendPort}, path: /small }
  - { method: GET, route: /plain-large, service: 127.0.0.1:${backendPort}, path: /large }
  - { method: GET, route: /slow, service: 127.0.0.1:${slowPort}, path: /slow, cache: true }
`,
    );
    const porticoPort = await freePort();
    started.push(
      await startProcess({
        name: 'portico',
        command: process.execPath,
        args: porticoStartArgs(file, porticoPort),
        core: pinning?.proxyCore,
        env: { PORTICO_LOG_LEVEL: 'warn' },
        ready: { kind: 'health', port: porticoPort, path: '/health' },
        timeoutMs: 30_000,
      }),
    );
    const portico = `http://127.0.0.1:${porticoPort}`;
    const floorProcess = await startProcess({
      name: 'node-floor',
      command: process.execPath,
      args: [transpileEntry(resolve(ROOT, 'bench/node-floor.ts')), backend, '0'],
      core: pinning?.proxyCore,
      ready: { kind: 'stdout-line' },
    });
    started.push(floorProcess);
    const floor = `http://127.0.0.1:${floorProcess.port}`;
    const nginxCache = `http://127.0.0.1:${await nginxAt('proxy', pinning?.proxyCore, '/api/small')}`;
    const memoryProcess = await startProcess({
      name: 'node-memory',
      command: process.execPath,
      args: [transpileEntry(resolve(ROOT, 'bench/node-memory.ts')), dir, '0'],
      core: pinning?.proxyCore,
      ready: { kind: 'stdout-line' },
    });
    started.push(memoryProcess);
    const memory = `http://127.0.0.1:${memoryProcess.port}`;

    const rows: Row[] = [];
    for (const body of ['small', 'large'] as const)
      rows.push(
        { id: `portico-hit-${body}`, label: `Portico, cache hit, ${body}`, body, base: portico },
        { id: `nginx-hit-${body}`, label: `nginx proxy_cache, hit, ${body}`, body, base: nginxCache },
        { id: `ceiling-${body}`, label: `Node from memory (ceiling), ${body}`, body, base: memory },
        { id: `floor-${body}`, label: `Node floor, proxied, ${body}`, body, base: floor },
        {
          id: `portico-plain-${body}`,
          label: `Portico, proxied (no cache), ${body}`,
          body,
          base: portico,
          prefix: 'plain-',
        },
      );
    const url = (row: Row) => `${row.base}/api/${row.prefix ?? ''}${row.body}`;
    for (const row of rows) await getLoad(flags, url(row), 1); // warm-up: JIT, pools, and the caches filled
    const status = new Map<string, string>();
    for (const row of rows) status.set(row.id, await cacheStatusOf(url(row)));
    const reached = new Map<string, number>(rows.map((r) => [r.id, 0]));
    const figures = await rotateRows(rows, {
      rounds,
      durationSec,
      warmUp: async () => undefined,
      measure: async (row, seconds) => {
        const before = await served();
        const res = await getLoad(flags, url(row), seconds);
        // The first status request of served() is one the backend serves.
        reached.set(row.id, reached.get(row.id)! + (await served()) - before - 2);
        return res;
      },
    });

    // Request collapsing: a fresh key, 100 clients at once, a backend that takes its time.
    backendCalls = 0;
    const fresh = `${portico}/api/slow?k=${Date.now()}`;
    const statuses = await Promise.all(
      Array.from({ length: COLLAPSE_CLIENTS }, () =>
        request(fresh).then(async (res) => {
          await res.body.dump();
          return { status: res.statusCode, cacheStatus: String(res.headers['cache-status'] ?? '') };
        }),
      ),
    );
    const collapsed = statuses.filter((s) => s.cacheStatus.includes('collapsed')).length;
    const ok = statuses.filter((s) => s.status === 200).length;

    const rps = (id: string) => figures.get(id)!.rps;
    const m = describeMachine();
    const ratio = (a: string, b: string) => rps(a) / rps(b);
    const goalLine = (body: Body) => {
      const x = ratio(`portico-hit-${body}`, `floor-${body}`);
      return `- ${body}: a Portico hit serves ${x.toFixed(2)}x the Node floor's proxied req/s (goal >= ${GOAL}x: ${x >= GOAL ? 'met' : 'not met'}); nginx proxy_cache hits ${ratio(`nginx-hit-${body}`, `floor-${body}`).toFixed(2)}x; Portico hit / nginx hit ${ratio(`portico-hit-${body}`, `nginx-hit-${body}`).toFixed(2)}x; Portico hit / Node from memory (ceiling) ${ratio(`portico-hit-${body}`, `ceiling-${body}`).toFixed(2)}x.`;
    };
    const lines = [
      `# Cache hits (${new Date().toISOString().slice(0, 10)}, ${m.commit}${m.dirty ? ', uncommitted changes' : ''})`,
      '',
      `Machine: ${m.cpuModel}, ${m.nproc} CPUs, kernel ${m.kernel}; Node ${m.node}; ${loadGeneratorVersion(loadgen)}; ${nginxVersion(nginx)}.`,
      `Command: \`npm run bench:cache -- --duration ${durationSec} --rounds ${rounds} --connections ${connections}\`.`,
      `Bodies: ${BODIES.small.length} and ${BODIES.large.length} bytes of JSON, \`Cache-Control: public, max-age=3600\`. ${pinning ? `Proxies on core ${pinning.proxyCore}, nginx backend and load on core ${pinning.loadCore}` : 'No CPU pinning'}. Portico's log level: warn.`,
      '',
      `## Requests/s (${connections} connections, ${rounds} rounds x ${durationSec} s, rotating; medians)`,
      '',
      '| row | req/s (spread) | p99 ms | backend requests during the row | Cache-Status |',
      '|---|---|---|---:|---|',
      ...rows.map((row) => {
        const f = figures.get(row.id)!;
        const statusText = status.get(row.id) || '-';
        return `| ${row.label} | ${Math.round(f.rps)} (${f.spread}) | ${f.p99} | ${reached.get(row.id)} | ${statusText} |`;
      }),
      '',
      goalLine('small'),
      goalLine('large'),
      '',
      '## Request collapsing',
      '',
      `${COLLAPSE_CLIENTS} concurrent requests for one new URL (backend answers after ${SLOW_MS} ms): ${backendCalls} backend request(s); ${ok} answered 200, ${collapsed} of them \`detail=collapsed\` (goal: 1 backend request).`,
      '',
    ];
    emitResults(lines.join('\n'), flags.out);
  } finally {
    for (const s of started.reverse()) await s.stop();
    slow.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The backend's count of requests served (nginx stub_status, `server accepts handled requests`). */
async function statusRequests(backend: string): Promise<number> {
  const res = await request(`${backend}/status`);
  const text = await res.body.text();
  const counts = /\n\s*(\d+)\s+(\d+)\s+(\d+)\s*\n/.exec(text);
  if (counts === null) throw new Error(`unexpected stub_status answer: ${text}`);
  return Number(counts[3]);
}

/** How a row's answer was found, as its `Cache-Status` says (nginx: its $upstream_cache_status). */
async function cacheStatusOf(url: string): Promise<string> {
  const res = await request(url);
  await res.body.dump();
  return String(res.headers['cache-status'] ?? '');
}

runBench(main);
