/**
 * What named upstreams cost, and what they save (docs/upstreams.md), in one run:
 *
 *   node --import tsx bench/upstreams.ts [--duration 5] [--rounds 3] [--connections 50] [--churn-sec 120] [--out FILE]
 *
 * 1. Balancing overhead: requests/s of a small GET through a route to one `host:port` and through
 *    routes to a 3-target upstream (least-request, round-robin), the targets being one nginx
 *    listening on 127.0.0.1, .2 and .3 (so the backend is the same); rounds rotate the variants.
 *    Goal: a 3-target upstream >= 0.95x the single-service route.
 * 2. Churn: a 3-target upstream of bench/backend.ts processes under load for `--churn-sec`, one
 *    target killed (SIGKILL) every 10 s and restarted 5 s later on its port, with the default
 *    retries and outlier detection. Goal: zero failed requests (all GETs). `--churn-sec 0` skips it.
 * Portico is pinned to core 0 when `taskset` exists (its stdout drained by another process), the
 * backends and the load to core 1.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  CACHE_DIR,
  ROOT,
  cpuSeconds,
  detectPinning,
  freePort,
  porticoStartArgs,
  startProcess,
  transpileEntry,
  type Started,
} from './lib/processes.js';
import { loadGeneratorVersion, pickLoadGenerator, runLoad, type LoadResult } from './lib/load.js';
import { describeMachine } from './lib/machine.js';
import { emitResults, median, runBench } from './lib/report.js';
import { findNginx, nginxVersion, startNginxBackend } from './lib/nginx.js';
import { BUILT_IN_SCENARIOS } from './lib/scenarios.js';

const VARIANTS = [
  { id: 'single', label: 'one service (host:port)', path: '/single' },
  { id: 'least-request', label: '3-target upstream, least-request', path: '/three' },
  { id: 'round-robin', label: '3-target upstream, round-robin', path: '/three-rr' },
] as const;

async function startPortico(name: string, yaml: string, core: number | undefined, drainCore: number | undefined) {
  mkdirSync(CACHE_DIR, { recursive: true });
  const file = resolve(CACHE_DIR, `upstreams-${name}.yaml`);
  writeFileSync(file, yaml);
  const port = await freePort();
  return startProcess({
    name: `portico ${name}`,
    command: process.execPath,
    args: porticoStartArgs(file, port),
    core,
    drainCore,
    ready: { kind: 'health', port, path: '/health' },
    timeoutMs: 30_000,
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '3' },
      connections: { type: 'string', default: '50' },
      'churn-sec': { type: 'string', default: '120' },
      loadgen: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const durationSec = Number(values.duration);
  const rounds = Number(values.rounds);
  const connections = Number(values.connections);
  const churnSec = Number(values['churn-sec']);
  const pinning = detectPinning(true);
  const loadgen = pickLoadGenerator(values.loadgen);
  const nginx = findNginx();
  if (nginx === undefined) throw new Error('nginx is needed as the backend (apt-get install -y nginx)');
  const small = BUILT_IN_SCENARIOS.find((s) => s.id === 'small')!;
  const started: Started[] = [];
  const lines: string[] = [];
  const m = describeMachine();
  try {
    // 1. Overhead.
    const backend = await startNginxBackend(nginx, [small], pinning?.loadCore, ['127.0.0.1', '127.0.0.2', '127.0.0.3']);
    started.push(backend);
    const p = backend.port;
    const portico = await startPortico(
      'overhead',
      `upstreams:
  three: { targets: ["127.0.0.1:${p}", "127.0.0.2:${p}", "127.0.0.3:${p}"] }
  three-rr: { balance: round-robin, targets: ["127.0.0.1:${p}", "127.0.0.2:${p}", "127.0.0.3:${p}"] }
routes:
  - { method: GET, route: /single, service: "127.0.0.1:${p}", path: /small }
  - { method: GET, route: /three, service: three, path: /small }
  - { method: GET, route: /three-rr, service: three-rr, path: /small }
config:
  rateLimit: { enabled: false }
`,
      pinning?.proxyCore,
      pinning?.loadCore,
    );
    started.push(portico);
    const load = (path: string, seconds: number) =>
      runLoad(loadgen, {
        url: `http://127.0.0.1:${portico.port}/api${path}`,
        method: 'GET',
        headers: {},
        connections,
        durationSec: seconds,
        core: pinning?.loadCore,
      });
    for (const v of VARIANTS) await load(v.path, 1);
    const samples = new Map<string, LoadResult[]>(VARIANTS.map((v) => [v.id, []]));
    // CPU per request, counted (/proc): it moves far less than req/s when the machine is shared.
    const cpu = new Map<string, number[]>(VARIANTS.map((v) => [v.id, []]));
    for (let r = 1; r <= rounds; r++) {
      for (let i = 0; i < VARIANTS.length; i++) {
        const v = VARIANTS[(i + r) % VARIANTS.length]!;
        const before = cpuSeconds(portico.pid);
        const res = await load(v.path, durationSec);
        cpu.get(v.id)!.push(((cpuSeconds(portico.pid) - before) * 1e6) / Math.max(1, res.requests));
        samples.get(v.id)!.push(res);
        process.stderr.write(`round ${r} ${v.id.padEnd(14)} ${Math.round(res.rps)} req/s p99 ${res.p99Ms} ms\n`);
      }
    }
    const rps = (id: string) => median(samples.get(id)!.map((x) => x.rps));
    const cpuUs = (id: string) => median(cpu.get(id)!);
    lines.push(
      `# Named upstreams (${new Date().toISOString().slice(0, 10)}, ${m.commit}${m.dirty ? ', uncommitted changes' : ''})`,
      '',
      `Machine: ${m.cpuModel}, ${m.nproc} CPUs, kernel ${m.kernel}; Node ${m.node}; ${loadGeneratorVersion(loadgen)}; backend ${nginxVersion(nginx)}.`,
      `Command: \`node --import tsx bench/upstreams.ts --duration ${durationSec} --rounds ${rounds} --connections ${connections} --churn-sec ${churnSec}\`.`,
      `${pinning ? `Portico on core ${pinning.proxyCore}; nginx, the log drain and the load on core ${pinning.loadCore}` : 'no CPU pinning'}; Portico's stdout drained by another process.`,
      '',
      '## Balancing overhead (small GET)',
      '',
      '| route | median req/s | p99 ms | Portico CPU µs/request | errors + non-2xx |',
      '|---|---|---|---|---|',
      ...VARIANTS.map((v) => {
        const s = samples.get(v.id)!;
        const bad = s.reduce((n, x) => n + x.errors + x.badStatus, 0);
        return `| ${v.label} | ${Math.round(rps(v.id))} | ${median(s.map((x) => x.p99Ms))} | ${cpuUs(v.id).toFixed(1)} | ${bad} |`;
      }),
      '',
      `3-target least-request / one service: ${(rps('least-request') / rps('single')).toFixed(3)}x req/s, ${(cpuUs('single') / cpuUs('least-request')).toFixed(3)}x by CPU per request; round-robin: ${(rps('round-robin') / rps('single')).toFixed(3)}x req/s, ${(cpuUs('single') / cpuUs('round-robin')).toFixed(3)}x by CPU per request (goal >= 0.95x).`,
      '',
    );
    for (const s of started.splice(0).reverse()) await s.stop();

    // 2. Churn.
    if (churnSec > 0) {
      const entry = transpileEntry(resolve(ROOT, 'bench/backend.ts'));
      const ports = [await freePort(), await freePort(), await freePort()];
      const backends: (Started | undefined)[] = [];
      const startBackend = (port: number) =>
        startProcess({
          name: `backend ${port}`,
          command: process.execPath,
          args: [entry, String(port)],
          core: pinning?.loadCore,
          ready: { kind: 'stdout-line' },
        });
      for (const port of ports) backends.push(await startBackend(port));
      const churn = await startPortico(
        'churn',
        `upstreams:
  churn: { targets: [${ports.map((port) => `"127.0.0.1:${port}"`).join(', ')}] }
routes:
  - { method: GET, route: /churn, service: churn, path: /small }
config:
  rateLimit: { enabled: false }
`,
        pinning?.proxyCore,
        pinning?.loadCore,
      );
      started.push(churn);
      let kills = 0;
      let stopChurn = false;
      const churning = (async () => {
        for (let i = 0; !stopChurn; i = (i + 1) % ports.length) {
          await new Promise((r) => setTimeout(r, 5_000));
          if (stopChurn) break;
          const victim = backends[i];
          if (victim !== undefined) {
            process.kill(victim.pid, 'SIGKILL');
            backends[i] = undefined;
            kills++;
          }
          await new Promise((r) => setTimeout(r, 5_000));
          backends[i] = await startBackend(ports[i]!);
        }
      })();
      const res = await runLoad(loadgen, {
        url: `http://127.0.0.1:${churn.port}/api/churn`,
        method: 'GET',
        headers: {},
        connections,
        durationSec: churnSec,
        core: pinning?.loadCore,
      });
      stopChurn = true;
      await churning;
      for (const b of backends) await b?.stop();
      lines.push(
        '## Churn: one of three targets killed every 10 s and restarted 5 s later',
        '',
        `${churnSec} s of small GETs at ${connections} connections; ${kills} kills (SIGKILL); default retries (1) and outlier detection.`,
        '',
        `${res.requests} requests, ${Math.round(res.rps)} req/s, p99 ${res.p99Ms} ms; failed: ${res.errors} socket errors + ${res.badStatus} non-2xx (goal 0).`,
        '',
      );
    }
    emitResults(lines.join('\n'), values.out);
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
}

runBench(main);
