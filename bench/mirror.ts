/**
 * What mirroring costs the route it copies (docs/routing.md "Mirroring"; docs/performance.md):
 *
 *   node --import tsx bench/mirror.ts [--rate 1500] [--duration 10] [--rounds 3] [--out FILE]
 *   node --import tsx bench/mirror.ts --closed-loop [--connections 50] [--loadgen wrk] ...
 *
 * The 4 KB POST scenario (bench/lib/scenarios.ts) through three Portico processes in front of the
 * same nginx backend, one per row: no mirror; every request mirrored (`percent: 100`) to a
 * service that answers each copy after 2 s; every request mirrored to a service that accepts the
 * connection and never answers. Rounds rotate the rows (interleaved, so a change of the
 * machine's load falls on every row alike).
 *
 * The load is open-loop by default (bench/lib/open-loop.ts): `--rate` requests a second, well
 * below the route's capacity, each latency counted from the moment its request was due. That is
 * what the goal means: a route serving its normal traffic does not answer slower because it is
 * mirrored. `--closed-loop` runs wrk (or autocannon) with `--connections` instead: the gateway
 * saturated, where the copies' CPU is taken from the primary's, a figure of the mirror's cost in
 * throughput rather than in latency.
 *
 * Reported per row: req/s, p50, p99 (and p99.9 open-loop) of the client's answers (median of the
 * rounds), the p99 against the unmirrored one, Portico's peak RSS, and the copies answered,
 * failed and dropped (its /metrics). Goal: each mirrored p99 within 5% of the unmirrored p99, and
 * a peak RSS that does not grow with the length of the run. Portico is pinned to core 0 when
 * `taskset` exists, nginx, the mirrors and the load to core 1.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  CACHE_DIR,
  ROOT,
  detectPinning,
  freePort,
  peakRssMb,
  porticoStartArgs,
  startProcess,
  transpileEntry,
  type Started,
} from './lib/processes.js';
import { loadGeneratorVersion, pickLoadGenerator, runLoad, type LoadResult } from './lib/load.js';
import { runOpenLoop } from './lib/open-loop.js';
import { describeMachine } from './lib/machine.js';
import { emitResults, median, runBench } from './lib/report.js';
import { findNginx, nginxVersion, startNginxBackend } from './lib/nginx.js';
import { BUILT_IN_SCENARIOS } from './lib/scenarios.js';

const ROWS = [
  { id: 'none', label: 'no mirror' },
  { id: 'slow', label: 'mirrored to a service answering in 2 s' },
  { id: 'silent', label: 'mirrored to a service that never answers' },
] as const;
type RowId = (typeof ROWS)[number]['id'];

/** A mirror on 127.0.0.1: answers every request after `delayMs`, or never (undefined). */
async function startMirror(delayMs: number | undefined): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    req.resume();
    if (delayMs !== undefined) setTimeout(() => res.end('{}'), delayMs);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** The copies a Portico counted in its /metrics, by outcome and drop reason, summed over reasons. */
async function mirrorCounts(port: number): Promise<{ answered: number; failed: number; dropped: number }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const sum = (prefix: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith(prefix))
      .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  return {
    answered: sum('portico_mirror_requests_total{route="/echo",outcome="answered"}'),
    failed: sum('portico_mirror_requests_total{route="/echo",outcome="failed"}'),
    dropped: sum('portico_mirror_dropped_total{route="/echo"'),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '3' },
      connections: { type: 'string', default: '50' },
      rate: { type: 'string', default: '1500' },
      'closed-loop': { type: 'boolean', default: false },
      loadgen: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const durationSec = Number(values.duration);
  const rounds = Number(values.rounds);
  const connections = Number(values.connections);
  const rate = Number(values.rate);
  const closedLoop = values['closed-loop'] === true;
  const pinning = detectPinning(true);
  const loadgen = closedLoop ? pickLoadGenerator(values.loadgen) : undefined;
  const post = BUILT_IN_SCENARIOS.find((s) => s.id === 'post')!;
  const nginx = findNginx();
  const started: Started[] = [];
  const mirrors: { close(): Promise<void> }[] = [];
  const m = describeMachine();
  try {
    const backend =
      nginx === undefined
        ? await startProcess({
            name: 'backend',
            command: process.execPath,
            args: [transpileEntry(resolve(ROOT, 'bench/backend.ts')), String(await freePort())],
            core: pinning?.loadCore,
            ready: { kind: 'stdout-line' },
          })
        : // GET /small too: the readiness check asks for it.
          await startNginxBackend(nginx, [BUILT_IN_SCENARIOS.find((s) => s.id === 'small')!, post], pinning?.loadCore);
    started.push(backend);
    const slow = await startMirror(2_000);
    const silent = await startMirror(undefined);
    mirrors.push(slow, silent);
    const mirrorOf: Record<RowId, string> = {
      none: '',
      slow: `    mirror: { service: "127.0.0.1:${slow.port}" }\n`,
      silent: `    mirror: { service: "127.0.0.1:${silent.port}" }\n`,
    };
    const porticos = new Map<RowId, Started>();
    for (const row of ROWS) {
      mkdirSync(CACHE_DIR, { recursive: true });
      const file = resolve(CACHE_DIR, `mirror-${row.id}.yaml`);
      writeFileSync(
        file,
        `routes:
  - method: POST
    route: /echo
    path: /echo
    service: "127.0.0.1:${backend.port}"
${mirrorOf[row.id]}config:
  rateLimit: { enabled: false }
`,
      );
      const port = await freePort();
      const p = await startProcess({
        name: `portico ${row.id}`,
        command: process.execPath,
        args: porticoStartArgs(file, port),
        core: pinning?.proxyCore,
        drainCore: pinning?.loadCore,
        ready: { kind: 'health', port, path: '/health' },
        timeoutMs: 30_000,
      });
      started.push(p);
      porticos.set(row.id, p);
    }
    const load = (id: RowId, seconds: number): Promise<LoadResult & { p999Ms?: number }> => {
      const spec = {
        url: `http://127.0.0.1:${porticos.get(id)!.port}/api/echo`,
        method: 'POST' as const,
        headers: { 'content-type': post.body!.contentType },
        body: post.body!.data,
        durationSec: seconds,
        core: pinning?.loadCore,
      };
      return loadgen === undefined
        ? runOpenLoop({ ...spec, rate, connections: 256 })
        : runLoad(loadgen, { ...spec, connections });
    };
    for (const row of ROWS) await load(row.id, 1);
    const samples = new Map<RowId, (LoadResult & { p999Ms?: number })[]>(ROWS.map((r) => [r.id, []]));
    for (let r = 1; r <= rounds; r++)
      for (let i = 0; i < ROWS.length; i++) {
        const row = ROWS[(i + r) % ROWS.length]!;
        const res = await load(row.id, durationSec);
        samples.get(row.id)!.push(res);
        process.stderr.write(
          `round ${r} ${row.id.padEnd(7)} ${Math.round(res.rps)} req/s p50 ${res.p50Ms} p99 ${res.p99Ms} ms\n`,
        );
      }
    const p99 = (id: RowId) => median(samples.get(id)!.map((x) => x.p99Ms));
    const rowsText: string[] = [];
    for (const row of ROWS) {
      const s = samples.get(row.id)!;
      const portico = porticos.get(row.id)!;
      const copies = row.id === 'none' ? undefined : await mirrorCounts(portico.port);
      const bad = s.reduce((n, x) => n + x.errors + x.badStatus, 0);
      rowsText.push(
        `| ${row.label} | ${Math.round(median(s.map((x) => x.rps)))} | ${median(s.map((x) => x.p50Ms))} | ${p99(row.id)} |${closedLoop ? '' : ` ${median(s.map((x) => x.p999Ms ?? 0))} |`} ${(p99(row.id) / p99('none')).toFixed(3)}x | ${peakRssMb(portico.pid)?.toFixed(1) ?? 'n/a'} | ${copies === undefined ? '-' : `${copies.answered} / ${copies.failed} / ${copies.dropped}`} | ${bad} |`,
      );
    }
    emitResults(
      [
        `# Mirroring (${new Date().toISOString().slice(0, 10)}, ${m.commit}${m.dirty ? ', uncommitted changes' : ''})`,
        '',
        `Machine: ${m.cpuModel}, ${m.nproc} CPUs, kernel ${m.kernel}; Node ${m.node}; backend ${nginx === undefined ? 'bench/backend.ts' : nginxVersion(nginx)}.`,
        `Command: \`node --import tsx bench/mirror.ts --duration ${durationSec} --rounds ${rounds} ${closedLoop ? `--closed-loop --connections ${connections}` : `--rate ${rate}`}\`.`,
        `${pinning ? `Portico on core ${pinning.proxyCore}; nginx, the mirrors and the load on core ${pinning.loadCore}` : 'no CPU pinning'}. 4 KB POSTs, ${closedLoop ? `closed loop, ${connections} connections (${loadGeneratorVersion(loadgen!)})` : `open loop at ${rate} req/s, latency from each request's due time`}, ${rounds} rounds of ${durationSec} s per row, rows rotated; mirror defaults (percent 100, maxInFlight 64, timeoutSec 5).`,
        '',
        `| route | median req/s | p50 ms | p99 ms |${closedLoop ? '' : ' p99.9 ms |'} p99 / unmirrored | peak RSS MB | copies answered / failed / dropped | errors + non-2xx |`,
        `|---|---|---|---|${closedLoop ? '' : '---|'}---|---|---|---|`,
        ...rowsText,
        '',
        'Goal: p99 / unmirrored <= 1.05 for both mirrored rows, and the peak RSS of the mirrored rows close to the unmirrored one.',
        '',
      ].join('\n'),
      values.out,
    );
  } finally {
    for (const s of started.reverse()) await s.stop();
    for (const mirror of mirrors) await mirror.close();
  }
}

runBench(main);
