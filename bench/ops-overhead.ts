/**
 * What metrics and W3C trace propagation cost (issue 7): requests/s and latency through four
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
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CACHE_DIR, ROOT, detectPinning, startProcess, transpileEntry, type Started } from './lib/processes.js';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (opts: { url: string; connections: number; duration: number; pipelining: number }) => Promise<AutocannonResult>;

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

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { duration: { type: 'string', default: '5' }, rounds: { type: 'string', default: '3' }, connections: { type: 'string', default: '50' } },
  });
  const duration = Number(values.duration);
  const rounds = Number(values.rounds);
  const connections = Number(values.connections);
  const pinning = detectPinning(true);
  const { default: autocannon } = (await import('autocannon' as string)) as { default: Autocannon };

  const started: Started[] = [];
  try {
    const backendJs = transpileEntry(resolve(ROOT, 'bench/backend.ts'));
    const backend = await startProcess({ name: 'backend', command: process.execPath, args: [backendJs, '0'], core: pinning?.loadCore, ready: { kind: 'stdout-line' } });
    started.push(backend);

    mkdirSync(CACHE_DIR, { recursive: true });
    const gateways: { v: (typeof VARIANTS)[number]; url: string }[] = [];
    for (const v of VARIANTS) {
      const port = await freePort();
      const file = resolve(CACHE_DIR, `ops-overhead-${v.id}.yaml`);
      writeFileSync(file, [
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
      ].join('\n'));
      const gw = await startProcess({
        name: `portico-${v.id}`,
        command: process.execPath,
        args: ['--import', 'tsx', resolve(ROOT, 'src/cli/main.ts'), 'start', '--config', file, '--host', '127.0.0.1', '--port', String(port)],
        core: pinning?.proxyCore,
        env: { PORTICO_LOG_LEVEL: 'warn' },
        ready: { kind: 'health', port, path: '/health' },
        timeoutMs: 30_000,
      });
      started.push(gw);
      gateways.push({ v, url: `http://127.0.0.1:${port}/api/small` });
    }

    const samples = new Map<string, { rps: number[]; p50: number[]; p99: number[]; errors: number }>();
    for (const g of gateways) {
      // Warm-up: JIT and connection pools, not measured.
      await autocannon({ url: g.url, connections, duration: 1, pipelining: 1 });
      samples.set(g.v.id, { rps: [], p50: [], p99: [], errors: 0 });
    }
    for (let r = 1; r <= rounds; r++) {
      // Rotate the order each round so that no variant always runs first.
      const order = gateways.map((_, i) => gateways[(i + r) % gateways.length]!);
      for (const g of order) {
        const res = await autocannon({ url: g.url, connections, duration, pipelining: 1 });
        const s = samples.get(g.v.id)!;
        s.rps.push(res.requests.average);
        s.p50.push(res.latency.p50);
        s.p99.push(res.latency.p99);
        s.errors += res.errors + res.timeouts + res.non2xx;
        process.stderr.write(`round ${r} ${g.v.id.padEnd(8)} ${Math.round(res.requests.average)} req/s p50 ${res.latency.p50} ms p99 ${res.latency.p99} ms\n`);
      }
    }

    const base = median(samples.get('off')!.rps);
    const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
    const lines = [
      `# Metrics and trace propagation overhead (${new Date().toISOString().slice(0, 10)}, ${commit})`,
      '',
      `Node ${process.version}, ${connections} connections, ${rounds} rounds x ${duration} s per variant (medians), GET 400 B JSON through one route,`,
      `gateway logs at warn, ${pinning ? `gateway pinned to core ${pinning.proxyCore}, backend and autocannon on core ${pinning.loadCore}` : 'no CPU pinning'}.`,
      '',
      '| variant | req/s | vs. all off | p50 ms | p99 ms | errors |',
      '|---|---|---|---|---|---|',
      ...VARIANTS.map((v) => {
        const s = samples.get(v.id)!;
        const rps = median(s.rps);
        return `| ${v.label} | ${Math.round(rps)} | ${(rps / base).toFixed(3)} | ${median(s.p50)} | ${median(s.p99)} | ${s.errors} |`;
      }),
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
