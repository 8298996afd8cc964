/**
 * What metrics and W3C trace propagation cost: requests/s and latency through four
 * Portico processes that differ only in `config.telemetry`, measured in one run, in rounds that
 * alternate the variants so that drift (thermal, other load) hits them all alike.
 *
 *   node --import tsx bench/ops-overhead.ts [--duration 5] [--rounds 3] [--connections 50]
 *
 * Each gateway runs as its own process (the CLI under tsx, logs at warn so that request logging
 * does not drown the difference), pinned to core 0 when `taskset` exists; the static backend and
 * autocannon share core 1. The client sends no `traceparent`, so with propagation on the gateway
 * starts a trace per request (the costlier path: a trace id and a span id).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  CACHE_DIR,
  ROOT,
  detectPinning,
  porticoStartArgs,
  startProcess,
  transpileEntry,
  type Started,
} from './lib/processes.js';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  pipelining: number;
}) => Promise<AutocannonResult>;

const VARIANTS = [
  { id: 'off', label: 'metrics off, propagation off', metrics: false, propagation: false },
  { id: 'metrics', label: 'metrics on, propagation off', metrics: true, propagation: false },
  { id: 'trace', label: 'metrics off, propagation on', metrics: false, propagation: true },
  { id: 'both', label: 'metrics on, propagation on (default)', metrics: true, propagation: true },
] as const;

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** CPU seconds (user + system) a process used so far, from /proc (Linux); undefined elsewhere. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in USER_HZ (100)
  } catch {
    return undefined;
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '3' },
      connections: { type: 'string', default: '50' },
    },
  });
  const duration = Number(values.duration);
  const rounds = Number(values.rounds);
  const connections = Number(values.connections);
  const pinning = detectPinning(true);
  const { default: autocannon } = (await import('autocannon' as string)) as { default: Autocannon };

  const started: Started[] = [];
  try {
    const backendJs = transpileEntry(resolve(ROOT, 'bench/backend.ts'));
    const backend = await startProcess({
      name: 'backend',
      command: process.execPath,
      args: [backendJs, '0'],
      core: pinning?.loadCore,
      ready: { kind: 'stdout-line' },
    });
    started.push(backend);

    mkdirSync(CACHE_DIR, { recursive: true });
    const gateways: { v: (typeof VARIANTS)[number]; url: string; pid: number }[] = [];
    for (const v of VARIANTS) {
      const port = await freePort();
      const file = resolve(CACHE_DIR, `ops-overhead-${v.id}.yaml`);
      writeFileSync(
        file,
        [
          'routes:',
          '  - method: GET',
          '    route: /small',
          `    service: 127.0.0.1:${backend.port}`,
          '    path: /small',
          'config:',
          '  telemetry:',
          `    metrics: ${v.metrics}`,
          `    propagation: ${v.propagation}`,
          '',
        ].join('\n'),
      );
      const gw = await startProcess({
        name: `portico-${v.id}`,
        command: process.execPath,
        args: porticoStartArgs(file, port),
        core: pinning?.proxyCore,
        env: { PORTICO_LOG_LEVEL: 'warn' },
        ready: { kind: 'health', port, path: '/health' },
        timeoutMs: 30_000,
      });
      started.push(gw);
      gateways.push({ v, url: `http://127.0.0.1:${port}/api/small`, pid: gw.pid });
    }

    const samples = new Map<string, { rps: number[]; p50: number[]; p99: number[]; cpuUs: number[]; errors: number }>();
    for (const g of gateways) {
      // Warm-up: JIT and connection pools, not measured.
      await autocannon({ url: g.url, connections, duration: 1, pipelining: 1 });
      samples.set(g.v.id, { rps: [], p50: [], p99: [], cpuUs: [], errors: 0 });
    }
    for (let r = 1; r <= rounds; r++) {
      // Rotate the order each round so that no variant always runs first.
      const order = gateways.map((_, i) => gateways[(i + r) % gateways.length]!);
      for (const g of order) {
        const cpuBefore = cpuSeconds(g.pid);
        const res = await autocannon({ url: g.url, connections, duration, pipelining: 1 });
        const cpuAfter = cpuSeconds(g.pid);
        const s = samples.get(g.v.id)!;
        // Gateway CPU per request: far less sensitive than req/s to other load on the machine.
        if (cpuBefore !== undefined && cpuAfter !== undefined && res.requests.total > 0)
          s.cpuUs.push(((cpuAfter - cpuBefore) * 1e6) / res.requests.total);
        s.rps.push(res.requests.average);
        s.p50.push(res.latency.p50);
        s.p99.push(res.latency.p99);
        s.errors += res.errors + res.timeouts + res.non2xx;
        process.stderr.write(
          `round ${r} ${g.v.id.padEnd(8)} ${Math.round(res.requests.average)} req/s p50 ${res.latency.p50} ms p99 ${res.latency.p99} ms cpu ${s.cpuUs.at(-1)?.toFixed(1) ?? '?'} us/req\n`,
        );
      }
    }

    // Interference from other processes only ever slows a round down: the best round of each
    // variant (highest req/s, lowest CPU per request) is the least disturbed; medians shown too.
    const best = (xs: number[], pick: 'max' | 'min') =>
      xs.length === 0 ? undefined : pick === 'max' ? Math.max(...xs) : Math.min(...xs);
    const off = samples.get('off')!;
    const base = best(off.rps, 'max')!;
    const baseCpu = best(off.cpuUs, 'min');
    const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
    const lines = [
      `# Metrics and trace propagation overhead (${new Date().toISOString().slice(0, 10)}, ${commit})`,
      '',
      `Node ${process.version}, ${connections} connections, ${rounds} rounds x ${duration} s per variant, alternating; GET 400 B JSON through one route,`,
      `gateway logs at warn, ${pinning ? `gateway pinned to core ${pinning.proxyCore}, backend and autocannon on core ${pinning.loadCore}` : 'no CPU pinning'}.`,
      '',
      '| variant | best req/s | vs. all off | median req/s | least gateway CPU us/request | vs. all off | median CPU us/req | p50 ms | p99 ms | errors |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...VARIANTS.map((v) => {
        const s = samples.get(v.id)!;
        const rps = best(s.rps, 'max')!;
        const cpu = best(s.cpuUs, 'min');
        const cpuCells =
          cpu === undefined || baseCpu === undefined
            ? '| n/a | n/a | n/a'
            : `| ${cpu.toFixed(1)} | ${(cpu / baseCpu).toFixed(3)} | ${median(s.cpuUs).toFixed(1)}`;
        return `| ${v.label} | ${Math.round(rps)} | ${(rps / base).toFixed(3)} | ${Math.round(median(s.rps))} ${cpuCells} | ${median(s.p50)} | ${median(s.p99)} | ${s.errors} |`;
      }),
      '',
      'req/s depends on everything else the machine runs; gateway CPU time per request (from /proc) is the steadier measure of the cost.',
      '',
    ];
    process.stdout.write(lines.join('\n'));
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
