/**
 * A/B of two Portico builds on one scenario: `npm run bench:ab -- --old DIR --new DIR`. Both run
 * side by side (pinned like `npm run bench`) and are measured in many short interleaved rounds
 * (ABBA order); the result is the median new/old ratio of requests/s with its interquartile
 * range, and the same for p99 latency (each round's p99 of the new build over the old's). On
 * these shared machines a single run of the same build against itself moves by 0.86x-1.18x, so a
 * 3-5% change only shows in a median of 12 or more rounds.
 *
 * A build is a `dist/` directory inside the checkout (so that node_modules resolves), e.g.:
 *   npm run build && cp -r dist .tmp/dist-before     # before the change
 *   (change, then) npm run build
 *   npm run bench:ab -- --old .tmp/dist-before --new dist [--scenario post] [--rounds 16]
 * The same build under two sets of Node/V8 flags: --old dist --old-node-args '' --new-node-args='--flag=1'.
 * What the access log costs: --old dist --new dist --new-log-level warn (PORTICO_LOG_LEVEL).
 * What an open status page costs (docs/dashboard.md): --old dist --new dist --new-candidate portico-admin.
 * What a no-op plugin at every stage costs (docs/plugins.md): --old dist --new dist --new-candidate portico-plugins.
 */
import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ROOT, detectPinning, peakRssMb } from './lib/processes.js';
import { startBenchBackends } from './lib/backends.js';
import { pickLoadGenerator, runLoad } from './lib/load.js';
import { BUILT_IN_SCENARIOS } from './lib/scenarios.js';
import { loadSpecFor, startCandidate, type CandidateId, type RunningCandidate } from './lib/candidates.js';

const USAGE = `Usage: npm run bench:ab -- --old DIR [--new DIR] [options]

A/B of two Portico builds (dist/ directories inside the checkout) on one scenario.

  --old DIR              The build before the change (required), e.g. .tmp/dist-before
  --new DIR              The build after the change (default: dist)
  --scenario ID          ${BUILT_IN_SCENARIOS.map((s) => s.id).join(', ')} (default: small)
  --candidate ID         portico, portico-hs256, portico-metrics, portico-admin or portico-plugins (default: portico)
  --new-candidate ID     The candidate the new build runs as (default: --candidate), e.g.
                         portico-admin: the admin listener on with one live feed client
  --rounds N             Interleaved rounds, ABBA order (default: 16)
  --duration SEC         Seconds per measurement (default: 2)
  --connections N        Load generator connections (default: 50)
  --old-node-args ARGS   Node/V8 flags for the old build, space-separated (default: none)
  --new-node-args ARGS   The same for the new build
  --old-log-level LEVEL  PORTICO_LOG_LEVEL of the old build (default: the gateway's)
  --new-log-level LEVEL  The same for the new build
  -h, --help             Show this help
`;

/** A usage mistake: one line and the usage text on stderr, exit 2 (no stack trace). */
function usageError(message: string): never {
  process.stderr.write(`bench:ab: ${message}\n\n${USAGE}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      old: { type: 'string' },
      new: { type: 'string', default: 'dist' },
      scenario: { type: 'string', default: 'small' },
      candidate: { type: 'string', default: 'portico' },
      'new-candidate': { type: 'string' },
      rounds: { type: 'string', default: '16' },
      duration: { type: 'string', default: '2' },
      connections: { type: 'string', default: '50' },
      'old-node-args': { type: 'string', default: '' },
      'new-node-args': { type: 'string', default: '' },
      'old-log-level': { type: 'string' },
      'new-log-level': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
} catch (err) {
  usageError((err as Error).message.split('. ')[0]!);
}
const { values } = parsed;
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const main = (dir: string) => {
  const file = resolve(ROOT, dir, 'src/cli/main.js');
  if (!existsSync(file))
    usageError(`${file} not found: --old and --new name dist/ directories inside the checkout (npm run build first)`);
  return file;
};
if (values.old === undefined) usageError('--old DIR is required (a copy of dist/ from before the change)');
for (const name of ['rounds', 'duration', 'connections'] as const) {
  if (!/^\d+$/.test(values[name])) usageError(`--${name} "${values[name]}": expected a whole number`);
}
const builds = { old: main(values.old), new: main(values.new) };
const scenario = BUILT_IN_SCENARIOS.find((s) => s.id === values.scenario);
if (scenario === undefined)
  usageError(`unknown scenario ${values.scenario} (have ${BUILT_IN_SCENARIOS.map((s) => s.id).join(', ')})`);
const id = values.candidate as CandidateId;
const newId = (values['new-candidate'] ?? values.candidate) as CandidateId;
for (const c of [id, newId])
  if (!c.startsWith('portico') || c === 'portico-mapcache')
    usageError(
      '--candidate and --new-candidate must be portico, portico-hs256, portico-metrics, portico-admin or portico-plugins',
    );
const rounds = Math.max(2, Number(values.rounds));
const durationSec = Math.max(1, Number(values.duration));

const pinning = detectPinning(true);
const gen = pickLoadGenerator(undefined);
// The backend `npm run bench` uses (nginx when installed) and Portico's stdout into a drained pipe:
// an A/B measures what users get, not a process with nothing to write to and a slow backend.
const backends = await startBenchBackends([scenario], pinning);
const backend = backends.forScenario(scenario);
const started: RunningCandidate[] = [];
try {
  const start = async (
    candidate: CandidateId,
    build: string,
    nodeArgs: string,
    porticoLogLevel: string | undefined,
  ) => {
    const c = await startCandidate(candidate, {
      pinning,
      backend,
      scenarios: [scenario],
      porticoCommand: [process.execPath, build],
      nodeArgs: nodeArgs.split(' ').filter((a) => a !== ''),
      porticoLogLevel,
    });
    started.push(c);
    return c;
  };
  const a = await start(id, builds.old, values['old-node-args'], values['old-log-level']);
  const b = await start(newId, builds.new, values['new-node-args'], values['new-log-level']);
  for (const note of [...a.notes, ...b.notes]) process.stderr.write(`note: ${note}\n`);
  const measure = (c: RunningCandidate, seconds: number) =>
    runLoad(
      gen,
      loadSpecFor(c, scenario, {
        connections: Number(values.connections),
        durationSec: seconds,
        core: pinning?.loadCore,
      }),
    );
  await measure(a, 1);
  await measure(b, 1);
  const ratios: number[] = [];
  const p99Ratios: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    // ABBA: neither build always runs first.
    const [first, second] = round % 2 === 1 ? [a, b] : [b, a];
    const r1 = await measure(first, durationSec);
    const r2 = await measure(second, durationSec);
    const [ra, rb] = first === a ? [r1, r2] : [r2, r1];
    ratios.push(rb.rps / ra.rps);
    p99Ratios.push(rb.p99Ms / ra.p99Ms);
    process.stderr.write(
      `round ${round}/${rounds}: old ${Math.round(ra.rps)} req/s p99 ${ra.p99Ms.toFixed(2)} ms, new ${Math.round(rb.rps)} req/s p99 ${rb.p99Ms.toFixed(2)} ms, new/old ${(rb.rps / ra.rps).toFixed(3)}\n`,
    );
  }
  // Quantile by linear interpolation between the two nearest rounds.
  const quantile = (values: number[], q: number) => {
    const sorted = [...values].sort((x, y) => x - y);
    const pos = q * (sorted.length - 1);
    const lo = sorted[Math.floor(pos)]!;
    return lo + (sorted[Math.ceil(pos)]! - lo) * (pos - Math.floor(pos));
  };
  const summary = (values: number[]) =>
    `median ${quantile(values, 0.5).toFixed(3)} (IQR ${quantile(values, 0.25).toFixed(3)}-${quantile(values, 0.75).toFixed(3)}, ${rounds} rounds of ${durationSec} s)`;
  process.stdout.write(
    `${scenario.title}, ${id === newId ? id : `${id} -> ${newId}`}: new/old requests/s ${summary(ratios)}\n` +
      `new/old p99 latency ${summary(p99Ratios)} (lower is better)\n` +
      `peak RSS: old ${peakRssMb(a.pid)?.toFixed(0) ?? '?'} MB, new ${peakRssMb(b.pid)?.toFixed(0) ?? '?'} MB\n` +
      `backend: ${backends.description}\n`,
  );
} finally {
  await Promise.all(started.map((c) => c.stop().catch(() => undefined)));
  await backends.stop();
}
