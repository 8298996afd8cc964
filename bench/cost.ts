/**
 * What one request costs each proxy, counted rather than timed: CPU time (user + system, all
 * threads, from /proc/<pid>/stat) divided by the requests served under a steady load, and, with
 * --syscalls, the system calls per request (strace -c on a separate pass, since tracing slows the
 * process). CPU per request moves far less than req/s when other work shares the machine, so this
 * is how the hot path is compared with the Node floor on a busy machine; `npm run bench` remains
 * the figure users get.
 *   node --import tsx bench/cost.ts [--scenarios small,large,post] [--candidates node-floor,portico]
 *     [--rounds 3] [--duration 5] [--connections 20] [--syscalls] [--no-build] [--builds DIR,DIR]
 * `--builds` adds the public route of other Portico builds (dist/ directories inside the checkout,
 * as for `npm run bench:ab`), so that a change's cost is counted beside the floor in one run.
 * Writes bench/results/<date>-<commit>-cost.md.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, cpuSeconds, detectPinning } from './lib/processes.js';
import { pickLoadGenerator, runLoad } from './lib/load.js';
import { BUILT_IN_SCENARIOS, type BenchScenario } from './lib/scenarios.js';
import {
  loadSpecFor,
  porticoCommand,
  startCandidate,
  type CandidateId,
  type RunningCandidate,
} from './lib/candidates.js';
import { startBenchBackends } from './lib/backends.js';
import { describeMachine, load1 } from './lib/machine.js';
import { median } from './lib/report.js';

const { values } = parseArgs({
  options: {
    scenarios: { type: 'string', default: 'small,large,post' },
    candidates: { type: 'string', default: 'node-floor,portico,portico-hs256' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    builds: { type: 'string', default: '' },
    syscalls: { type: 'boolean' },
    'no-build': { type: 'boolean' },
  },
});
const scenarios = values.scenarios.split(',').map((id) => {
  const s = BUILT_IN_SCENARIOS.find((b) => b.id === id);
  if (s === undefined) throw new Error(`unknown scenario ${id}`);
  return s;
});
const ids = values.candidates.split(',') as CandidateId[];
const builds = values.builds.split(',').filter((b) => b !== '');
for (const b of builds)
  if (!existsSync(resolve(ROOT, b, 'src/cli/main.js'))) throw new Error(`--builds: no ${b}/src/cli/main.js`);
const rounds = Math.max(1, Number(values.rounds));
const durationSec = Math.max(1, Number(values.duration));
const connections = Math.max(1, Number(values.connections));

if (values['no-build'] !== true)
  spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit', timeout: 300_000 });

interface Sample {
  readonly cpuUsPerRequest: number;
  readonly rps: number;
}

const pinning = detectPinning(true);
const gen = pickLoadGenerator(undefined);
const backends = await startBenchBackends(scenarios, pinning);
const machine = describeMachine();
const commit = machine.commit + (machine.dirty ? '-dirty' : '');
const loadAtStart = load1();
const sections: string[] = [];

async function measure(c: RunningCandidate, s: BenchScenario, seconds: number): Promise<Sample> {
  const before = cpuSeconds(c.pid);
  const r = await runLoad(gen, loadSpecFor(c, s, { connections, durationSec: seconds, core: pinning?.loadCore }));
  const spent = cpuSeconds(c.pid) - before;
  if (r.errors > 0 || r.badStatus > 0) throw new Error(`${c.label}: ${r.errors} errors, ${r.badStatus} bad statuses`);
  return { cpuUsPerRequest: (spent * 1e6) / r.requests, rps: r.rps };
}

/** System calls per request: strace -c attached to the process for one load run. */
async function syscalls(c: RunningCandidate, s: BenchScenario): Promise<{ perRequest: number; top: string }> {
  const out = resolve(ROOT, `node_modules/.cache/portico-bench/strace-${c.id}.txt`);
  const tracer = spawn('strace', ['-c', '-f', '-o', out, '-p', String(c.pid)], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  const r = await runLoad(gen, loadSpecFor(c, s, { connections, durationSec: 3, core: pinning?.loadCore }));
  tracer.kill('SIGINT');
  await new Promise((r) => tracer.once('exit', r));
  const lines = readFileSync(out, 'utf8').split('\n');
  const rows = lines
    .map((l) => /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ name: m[2]!, calls: Number(m[1]) }))
    .filter((row) => row.name !== 'total');
  const total = rows.reduce((sum, row) => sum + row.calls, 0);
  rows.sort((a, b) => b.calls - a.calls);
  const top = rows
    .slice(0, 6)
    .map((row) => `${row.name} ${(row.calls / r.requests).toFixed(2)}`)
    .join(', ');
  return { perRequest: total / r.requests, top };
}

try {
  for (const s of scenarios) {
    const backend = backends.forScenario(s);
    const started: RunningCandidate[] = [];
    try {
      for (const id of ids)
        started.push(
          await startCandidate(id, {
            pinning,
            backend,
            scenarios: [s],
            porticoCommand: porticoCommand(true).command,
            porticoLogLevel: undefined,
          }),
        );
      for (const b of builds) {
        const c = await startCandidate('portico', {
          pinning,
          backend,
          scenarios: [s],
          porticoCommand: [process.execPath, resolve(ROOT, b, 'src/cli/main.js')],
          porticoLogLevel: undefined,
        });
        started.push({ ...c, label: `${c.label}, build ${b}` });
      }
      for (const c of started) await measure(c, s, 2); // warm-up
      const samples = new Map<RunningCandidate, Sample[]>(started.map((c) => [c, []]));
      for (let round = 0; round < rounds; round++) {
        const order = started.map((_, i) => started[(i + round) % started.length]!);
        for (const c of order) samples.get(c)!.push(await measure(c, s, durationSec));
      }
      const floorCandidate = started.find((c) => c.id === 'node-floor');
      const floor = median((floorCandidate && samples.get(floorCandidate)?.map((x) => x.cpuUsPerRequest)) ?? []);
      const rows = [
        '| candidate | CPU µs / request | rounds | floor / candidate | req/s (not comparable on a busy machine) | syscalls / request | most frequent (per request) |',
        '|---|---:|---|---:|---:|---:|---|',
      ];
      for (const c of started) {
        const xs = samples.get(c)!;
        const cpu = median(xs.map((x) => x.cpuUsPerRequest));
        const sc = values.syscalls === true ? await syscalls(c, s) : undefined;
        rows.push(
          `| ${c.label} | ${cpu.toFixed(1)} | ${xs.map((x) => x.cpuUsPerRequest.toFixed(1)).join(', ')} | ${
            floor > 0 ? (floor / cpu).toFixed(2) + 'x' : 'n/a'
          } | ${Math.round(median(xs.map((x) => x.rps))).toLocaleString('en-US')} | ${
            sc === undefined ? '' : sc.perRequest.toFixed(2)
          } | ${sc?.top ?? ''} |`,
        );
      }
      sections.push(`### ${s.title}\n\n${rows.join('\n')}\n`);
      process.stderr.write(`${sections.at(-1)}\n`);
    } finally {
      await Promise.all(started.map((c) => c.stop()));
    }
  }
} finally {
  await backends.stop();
}

const date = new Date().toISOString();
const command = `node --import tsx bench/cost.ts ${process.argv.slice(2).join(' ')}`.trim();
const report = `# Cost per request ${date.slice(0, 10)} (${commit})

- command: \`${command}\`
- date: ${date}; commit ${commit}
- machine: ${machine.nproc} CPUs, ${machine.cpuModel}; Linux ${machine.kernel}; Node ${machine.node}
- load: ${gen}, ${connections} connections; ${rounds} interleaved rounds of ${durationSec} s after a 2 s warm-up; medians
- backend: ${backends.description}
- CPU per request: the proxy process's user + system time (all threads) over the requests it served;
  "floor / candidate" above 1 means cheaper than the Node floor. Portico's stdout is a pipe read by
  another process, whose CPU is not counted here.
- 1-minute load average: ${loadAtStart.toFixed(2)} at start, ${load1().toFixed(2)} at end

${sections.join('\n')}`;
const file = resolve(ROOT, 'bench/results', `${date.slice(0, 10)}-${commit}-cost.md`);
writeFileSync(file, report);
process.stderr.write(`wrote ${file}\n`);
