/**
 * CPU time per request at the edge (docs/performance.md, "TLS and HTTP/2"): a measure that holds
 * on a shared machine better than requests per second, which every other process moves.
 *
 *   node --import tsx bench/edge-cpu.ts [--requests 20000] [--rounds 5] [--base DIR] [--out FILE]
 *
 * A small GET proxied to an nginx backend, over h2 (50 streams on 10 connections) and HTTPS/1.1
 * (50 connections), through Portico (this tree's build, and with `--base` the build of the tree at
 * DIR, e.g. a git worktree of an older commit with its node_modules), the Node floor (bench/node-floor.ts: h2 through node:http2's
 * compatibility API) and the floor's h2 through the core stream API. Each sample is `--requests`
 * requests sent by h2load to one row; the row's CPU time (user + system, from /proc) over it,
 * divided by the requests done, is its CPU per request. Rounds rotate the rows; the table gives
 * each row's median. Goal (docs/performance.md "TLS and HTTP/2"): Portico's h2 at >= 0.85x the floor's
 * compatibility-API h2, here as the floor's CPU per request over Portico's. The floor does none of
 * Portico's default duties (access line, request id, X-Forwarded-*, traceparent); the rows of
 * bench/node-floor-duties.ts over TLS do them, and the last line gives Portico's ratio to those.
 * Processes are pinned as in bench/edge.ts when `taskset` exists.
 */
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, cpuSeconds, freePort, porticoCli, startProcess, type Started } from './lib/processes.js';
import { describeMachine } from './lib/machine.js';
import { emitResults, median, runBench } from './lib/report.js';
import { nginxVersion, startNginxBackend } from './lib/nginx.js';
import { BUILT_IN_SCENARIOS } from './lib/scenarios.js';
import { edgeSetup, h2load, makeCertificate, startFloor, startFloorDuties } from './lib/h2load.js';

interface Row {
  readonly key: string;
  readonly label: string;
  readonly h2: boolean;
  readonly port: number;
  readonly pid: number;
}

/** `portico start` of the tree at `root` (its build: under tsx the loader's per-request work would count against Portico alone) on `port` with TLS. */
async function startPortico(
  root: string,
  name: string,
  dir: string,
  tls: { cert: string; key: string },
  backendPort: number,
  core: number | undefined,
  drainCore: number | undefined,
): Promise<Started> {
  const port = await freePort();
  const healthPort = await freePort();
  const file = join(dir, `${name.replace(/\W+/g, '-')}.yaml`);
  writeFileSync(
    file,
    `config:
  rateLimit: { enabled: false }
  tls: { certFile: ${tls.cert}, keyFile: ${tls.key}, redirectPort: ${healthPort} }
routes:
  - { method: GET, route: /small, service: "127.0.0.1:${backendPort}", path: /small }
`,
  );
  const started = await startProcess({
    name,
    command: process.execPath,
    args: [...porticoCli(root), 'start', '--config', file, '--host', '127.0.0.1', '--port', String(port)],
    core,
    drainCore,
    ready: { kind: 'health', port: healthPort, path: '/health' },
    timeoutMs: 30_000,
  });
  return { ...started, port };
}

/** The h2load arguments of one sample: `n` requests at 50 in flight. */
function sampleArgs(h2: boolean, port: number, n: number): string[] {
  const url = `https://127.0.0.1:${port}/api/small`;
  return h2 ? ['-n', String(n), '-c', '10', '-m', '5', url] : ['--h1', '-n', String(n), '-c', '50', '-m', '1', url];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '20000' },
      rounds: { type: 'string', default: '5' },
      base: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const n = Number(values.requests);
  const rounds = Number(values.rounds);
  const { pinning, nginx, dir } = edgeSetup('edge-cpu');
  const started: Started[] = [];
  const m = describeMachine();
  const base = values.base === undefined ? undefined : resolve(values.base);
  const baseCommit =
    base === undefined ? '' : execFileSync('git', ['-C', base, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
  try {
    const tls = makeCertificate(dir);
    const small = BUILT_IN_SCENARIOS.find((s) => s.id === 'small')!;
    const backend = await startNginxBackend(nginx, [small], pinning?.loadCore);
    started.push(backend);
    const porticos: [string, Started][] = [];
    const porticoAt = async (root: string, name: string) => {
      const s = await startPortico(root, name, dir, tls, backend.port, pinning?.proxyCore, pinning?.loadCore);
      started.push(s);
      porticos.push([name, s]);
    };
    await porticoAt(ROOT, `Portico ${m.commit}${m.dirty ? ' (uncommitted changes)' : ''}`);
    if (base !== undefined) await porticoAt(base, `Portico base ${baseCommit.trim()}`);
    const floor = async (extra: string[]) => {
      const s = await startFloor(backend.port, pinning?.proxyCore, extra);
      started.push(s);
      return s;
    };
    const tlsFloor = await floor(['--tls', tls.cert, tls.key]);
    const coreFloor = await floor(['--tls', tls.cert, tls.key, '--h2-core']);
    const duties = await startFloorDuties(`http://127.0.0.1:${backend.port}`, {
      core: pinning?.proxyCore,
      drainCore: pinning?.loadCore,
      tls,
    });
    started.push(duties);
    const rows: Row[] = [
      ...porticos.flatMap(([label, s], i) => [
        { key: `portico${i} h2`, label: `${label}, h2`, h2: true, port: s.port, pid: s.pid },
        { key: `portico${i} https1`, label: `${label}, HTTPS/1.1`, h2: false, port: s.port, pid: s.pid },
      ]),
      {
        key: 'floor h2',
        label: 'Node floor, h2 (compatibility API)',
        h2: true,
        port: tlsFloor.port,
        pid: tlsFloor.pid,
      },
      { key: 'floor https1', label: 'Node floor, HTTPS/1.1', h2: false, port: tlsFloor.port, pid: tlsFloor.pid },
      { key: 'core h2', label: 'Node floor, h2 (core stream API)', h2: true, port: coreFloor.port, pid: coreFloor.pid },
      { key: 'duties h2', label: 'Node floor + default duties, h2', h2: true, port: duties.port, pid: duties.pid },
      {
        key: 'duties https1',
        label: 'Node floor + default duties, HTTPS/1.1',
        h2: false,
        port: duties.port,
        pid: duties.pid,
      },
    ];
    const samples = new Map<string, number[]>(rows.map((r) => [r.key, []]));
    const failures = new Map<string, number>(rows.map((r) => [r.key, 0]));
    // Warm-up: every row once, JIT and pools settled, not counted.
    for (const r of rows) await h2load(sampleArgs(r.h2, r.port, Math.min(n, 5_000)), pinning?.loadCore);
    for (let round = 1; round <= rounds; round++)
      for (let i = 0; i < rows.length; i++) {
        const r = rows[(i + round) % rows.length]!;
        const before = cpuSeconds(r.pid);
        const res = await h2load(sampleArgs(r.h2, r.port, n), pinning?.loadCore);
        const us = ((cpuSeconds(r.pid) - before) * 1e6) / Math.max(1, res.done);
        samples.get(r.key)!.push(us);
        failures.set(r.key, failures.get(r.key)! + res.failed + res.non2xx);
        process.stderr.write(`round ${round} ${r.key.padEnd(16)} ${us.toFixed(1)} µs CPU per request\n`);
      }
    const cpu = (key: string) => median(samples.get(key)!);
    const lines = [
      `# CPU per request at the edge (${new Date().toISOString().slice(0, 10)}, ${m.commit}${m.dirty ? ', uncommitted changes' : ''})`,
      '',
      `Machine: ${m.cpuModel}, ${m.nproc} CPUs, kernel ${m.kernel}; Node ${m.node}; backend ${nginxVersion(nginx)} (one worker).`,
      `Command: \`node --import tsx bench/edge-cpu.ts --requests ${n} --rounds ${rounds}${base === undefined ? '' : ` --base ${values.base}`}\`.`,
      `${pinning ? `Proxies on core ${pinning.proxyCore}; the backend, Portico's log drain and h2load on core ${pinning.loadCore}` : 'no CPU pinning'}. Small GET (400 B JSON), ${n} requests per sample at 50 in flight (h2: 50 streams on 10 connections; HTTPS/1.1: 50 connections). CPU time (user + system) of the proxy's process over the sample, per request done.`,
      '',
      '| row | median CPU µs per request | rounds | failed + non-2xx |',
      '|---|---:|---|---:|',
      ...rows.map(
        (r) =>
          `| ${r.label} | ${cpu(r.key).toFixed(1)} | ${samples
            .get(r.key)!
            .map((v) => v.toFixed(1))
            .join(', ')} | ${failures.get(r.key)} |`,
      ),
      '',
      ...porticos.flatMap(([label], i) => [
        `${label}: against the floor doing the same default duties, h2 at ${(cpu('duties h2') / cpu(`portico${i} h2`)).toFixed(3)}x, HTTPS/1.1 at ${(cpu('duties https1') / cpu(`portico${i} https1`)).toFixed(3)}x.`,
        `${label}: h2 at ${(cpu('floor h2') / cpu(`portico${i} h2`)).toFixed(3)}x the floor's compatibility-API h2 (goal >= 0.85x), ${(cpu('core h2') / cpu(`portico${i} h2`)).toFixed(3)}x its core-API h2; HTTPS/1.1 at ${(cpu('floor https1') / cpu(`portico${i} https1`)).toFixed(3)}x the floor's (goal >= 0.85x); requests per CPU second, the inverse of the CPU per request.`,
      ]),
      ...(base === undefined
        ? []
        : [
            `This tree over the base: h2 ${(cpu('portico1 h2') / cpu('portico0 h2')).toFixed(3)}x, HTTPS/1.1 ${(cpu('portico1 https1') / cpu('portico0 https1')).toFixed(3)}x (requests per CPU second).`,
          ]),
      '',
    ];
    emitResults(lines.join('\n'), values.out);
  } finally {
    for (const s of started.reverse()) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
