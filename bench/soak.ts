/**
 * Memory over a long run (the goal: peak RSS under load below 120 MB, no growth over 2 minutes;
 * report start and end). One candidate under constant load, its RSS sampled every 5 s.
 *   node --import tsx bench/soak.ts [--candidate portico] [--scenario small] [--duration 120] [--no-build]
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, detectPinning, peakRssMb, rssMb, startProcess, transpileEntry } from './lib/processes.js';
import { pickLoadGenerator, runLoad } from './lib/load.js';
import { BUILT_IN_SCENARIOS } from './lib/scenarios.js';
import { CANDIDATES, loadSpecFor, porticoCommand, startCandidate, type CandidateId } from './lib/candidates.js';

const { values } = parseArgs({
  options: {
    candidate: { type: 'string', default: 'portico' },
    scenario: { type: 'string', default: 'small' },
    duration: { type: 'string', default: '120' },
    'no-build': { type: 'boolean' },
  },
});
const id = values.candidate as CandidateId;
if (!CANDIDATES.some((c) => c.id === id)) throw new Error(`unknown candidate ${id}`);
const scenario = BUILT_IN_SCENARIOS.find((s) => s.id === values.scenario);
if (scenario === undefined) throw new Error(`unknown scenario ${values.scenario}`);
const durationSec = Math.min(1800, Math.max(10, Number(values.duration)));

if (values['no-build'] !== true && id.startsWith('portico'))
  spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit', timeout: 300_000 });
const pinning = detectPinning(true);
const backend = await startProcess({
  name: 'backend',
  command: process.execPath,
  args: [transpileEntry(resolve(ROOT, 'bench/backend.ts'))],
  core: pinning?.loadCore,
  ready: { kind: 'stdout-line' },
});
try {
  const c = await startCandidate(id, {
    pinning,
    backend,
    scenarios: [scenario],
    porticoCommand: porticoCommand(true).command,
    porticoLogLevel: undefined,
  });
  const idle = rssMb(c.pid);
  const samples: { t: number; rss: number | undefined }[] = [];
  const started = Date.now();
  const timer = setInterval(
    () => samples.push({ t: Math.round((Date.now() - started) / 1000), rss: rssMb(c.pid) }),
    5_000,
  );
  const r = await runLoad(
    pickLoadGenerator(undefined),
    loadSpecFor(c, scenario, { connections: 50, durationSec, core: pinning?.loadCore }),
  );
  clearInterval(timer);
  const mb = (v: number | undefined) => (v === undefined ? 'n/a' : `${v.toFixed(1)} MB`);
  const first = samples[0]?.rss;
  const last = samples.at(-1)?.rss;
  process.stdout.write(
    [
      `${c.label}, ${scenario.title}, ${durationSec} s at ${Math.round(r.rps)} req/s (p99 ${r.p99Ms.toFixed(2)} ms, ${r.badStatus} non-2xx, ${r.errors} errors)`,
      `RSS idle ${mb(idle)}; under load: first sample (5 s) ${mb(first)}, last ${mb(last)}, peak ${mb(peakRssMb(c.pid))}`,
      `samples: ${samples.map((s) => `${s.t}s=${s.rss?.toFixed(0) ?? '?'}`).join(' ')}`,
    ].join('\n') + '\n',
  );
  await c.stop();
} finally {
  await backend.stop();
}
