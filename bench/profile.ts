/**
 * Profiles Portico's hot path: the built gateway under `node --cpu-prof`, the small GET
 * (or another scenario) from the load generator for a few seconds, then a summary of where the CPU
 * went (bench/profile-summary.ts), with microseconds per request by area. `--candidate node-floor`
 * profiles the Node floor the same way, so the two summaries compare area by area. The backend is
 * the one `npm run bench` uses (nginx when installed). Writes the summary to
 * bench/results/<date>-<commit>-profile[-CANDIDATE].md; the raw .cpuprofile stays in
 * .tmp/profiles/ (open it in Chrome DevTools or speedscope).
 *   node --import tsx bench/profile.ts [--candidate portico|portico-hs256|portico-metrics|node-floor] [--scenario small] [--duration 10] [--no-build]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, detectPinning } from './lib/processes.js';
import { startBenchBackends } from './lib/backends.js';
import { pickLoadGenerator, runLoad } from './lib/load.js';
import { BUILT_IN_SCENARIOS } from './lib/scenarios.js';
import { loadSpecFor, porticoCommand, startCandidate, type CandidateId } from './lib/candidates.js';
import { describeMachine, load1 } from './lib/machine.js';
import { formatSummary, summariseProfile, type CpuProfile } from './profile-summary.js';

const { values } = parseArgs({
  options: {
    candidate: { type: 'string', default: 'portico' },
    scenario: { type: 'string', default: 'small' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    'no-build': { type: 'boolean' },
    'portico-log-level': { type: 'string' },
  },
});
const id = values.candidate as CandidateId;
if (!id.startsWith('portico') && id !== 'node-floor')
  throw new Error('--candidate must be portico, portico-hs256, portico-metrics or node-floor');
const scenario = BUILT_IN_SCENARIOS.find((s) => s.id === values.scenario);
if (scenario === undefined) throw new Error(`unknown scenario ${values.scenario}`);
const durationSec = Math.min(120, Math.max(1, Number(values.duration)));

if (values['no-build'] !== true)
  spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit', timeout: 300_000 });
const dir = resolve(ROOT, '.tmp/profiles', `${Date.now()}`);
mkdirSync(dir, { recursive: true });
const pinning = detectPinning(true);
const gen = pickLoadGenerator(undefined);
const backends = await startBenchBackends([scenario], pinning);
const backend = backends.forScenario(scenario);
const load = load1();
try {
  const candidate = await startCandidate(id, {
    pinning,
    backend,
    scenarios: [scenario],
    porticoCommand: porticoCommand(true).command,
    porticoLogLevel: values['portico-log-level'],
    nodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir],
  });
  const spec = loadSpecFor(candidate, scenario, {
    connections: Number(values.connections),
    durationSec,
    core: pinning?.loadCore,
  });
  const r = await runLoad(gen, spec);
  process.stderr.write(
    `${candidate.label}, ${scenario.title}: ${Math.round(r.rps)} req/s, p99 ${r.p99Ms.toFixed(2)} ms (profiling slows it down)\n`,
  );
  await candidate.stop(); // SIGTERM: Portico drains and exits, and V8 writes the profile
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => resolve(dir, f));
  const file = files.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (file === undefined) throw new Error(`no .cpuprofile written in ${dir}`);
  const summary = formatSummary(summariseProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile), 25, r.requests);
  const m = describeMachine();
  const header = [
    `# CPU profile: ${candidate.label}, ${scenario.title} (${m.commit}${m.dirty ? ', uncommitted changes' : ''})`,
    '',
    `- command: \`${['node --import tsx bench/profile.ts', ...process.argv.slice(2)].join(' ')}\``,
    `- ${m.nproc} CPUs, ${m.cpuModel}; Node ${m.node}; ${gen}, ${spec.connections} connections, ${durationSec} s; 1-minute load average ${load.toFixed(2)} at start`,
    `- under the profiler: ${Math.round(r.rps)} req/s, p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms`,
    `- backend: ${backends.description}`,
    `- raw profile: ${file.slice(ROOT.length + 1)} (it includes start-up and the drain at exit; per-request figures divide everything by the requests of the load run)`,
  ].join('\n');
  process.stdout.write(`${header}\n\n${summary}\n`);
  const suffix = id === 'portico' ? '' : `-${id}`;
  const out = resolve(
    ROOT,
    'bench/results',
    `${new Date().toISOString().slice(0, 10)}-${m.commit}-profile${suffix}.md`,
  );
  mkdirSync(resolve(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(out, `${header}\n\n${summary}\n`);
  process.stderr.write(`written: ${out.slice(ROOT.length + 1)}\n`);
} finally {
  await backends.stop();
}
// Keep only the newest raw profiles.
const all = readdirSync(resolve(ROOT, '.tmp/profiles')).sort();
for (const old of all.slice(0, Math.max(0, all.length - 5)))
  rmSync(resolve(ROOT, '.tmp/profiles', old), { recursive: true, force: true });
