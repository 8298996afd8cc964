/**
 * `npm run bench`: the load benchmark. Starts the backend (nginx when installed, else the Node one:
 * lib/backends.ts) and every candidate on 127.0.0.1 (each its own process, pinned where taskset
 * exists; fresh processes for every scenario), runs the load generator in rounds that alternate
 * the candidates, prints one table per scenario (medians of the rounds) with its "backend direct /
 * floor" headroom, and writes it to bench/results/<date>-<commit>.md. Portico logs as users run
 * it: default level, stdout into a pipe read by a separate process (lib/processes.ts).
 * `npm run bench -- --help` lists the flags.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseOptions, USAGE, type BenchOptions } from './lib/options.js';
import { ROOT, detectPinning, peakRssMb, resetPeakRss, rssMb } from './lib/processes.js';
import { startBenchBackends, type BenchBackends } from './lib/backends.js';
import { loadGeneratorVersion, pickLoadGenerator, runLoad, type LoadGenerator } from './lib/load.js';
import { BUILT_IN_SCENARIOS, hookScenarios, type BenchScenario } from './lib/scenarios.js';
import {
  CANDIDATES,
  loadSpecFor,
  requestHeaders,
  metricsSwitch,
  porticoCommand,
  porticoYaml,
  startCandidate,
  type CandidateId,
  type RunningCandidate,
} from './lib/candidates.js';
import {
  goals,
  goalsTable,
  headroom,
  roundsTable,
  summarise,
  table,
  type RoundSample,
  type Row,
} from './lib/report.js';
import { describeMachine, load1 } from './lib/machine.js';

const log = (line: string) => process.stderr.write(line + '\n');

function build(): string | undefined {
  log('building Portico (npm run build)...');
  const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
  if (r.status === 0) return undefined;
  const why = `npm run build failed (exit ${r.status}); dist/ as emitted was used: ${(r.stdout + r.stderr).trim().split('\n').slice(0, 3).join(' / ')}`;
  log(why);
  return why;
}

/** One request before the rounds: a combination that does not answer 200 is reported, not measured. */
async function probe(c: RunningCandidate, s: BenchScenario): Promise<string | undefined> {
  try {
    const res = await fetch(c.urlFor(s), {
      method: s.method,
      headers: requestHeaders(c, s),
      body: s.body?.data,
      signal: AbortSignal.timeout(5_000),
    });
    await res.arrayBuffer();
    return res.status === 200
      ? undefined
      : `answers ${res.status}${res.headers.get('x-portico-error') ? ` (${res.headers.get('x-portico-error')})` : ''}: not measured`;
  } catch (err) {
    return `request failed (${(err as Error).message}): not measured`;
  }
}

async function measure(
  gen: LoadGenerator,
  o: BenchOptions,
  c: RunningCandidate,
  s: BenchScenario,
  core: number | undefined,
  durationSec: number,
) {
  return runLoad(gen, loadSpecFor(c, s, { connections: o.connections, durationSec, core }));
}

async function main(): Promise<number> {
  const parsed = parseOptions(process.argv.slice(2), process.env);
  if (parsed === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const o = parsed;
  const machine = describeMachine();
  const pinning = detectPinning(o.pin);
  const gen = pickLoadGenerator(o.loadgen);
  const notes: string[] = [];
  if (pinning === undefined)
    notes.push(o.pin ? 'no pinning (taskset missing or fewer than 2 cores)' : 'pinning disabled (--no-pin)');
  if (o.build) {
    const failed = build();
    if (failed !== undefined) notes.push(failed);
  }
  const portico = porticoCommand(true);
  if (portico.note !== undefined) notes.push(portico.note);

  const hooks = await hookScenarios(resolve(ROOT, 'bench'));
  notes.push(...hooks.notes);
  const allScenarios = [...BUILT_IN_SCENARIOS, ...hooks.scenarios];
  const scenarios = o.scenarios === undefined ? allScenarios : allScenarios.filter((s) => o.scenarios!.includes(s.id));
  const unknownScenarios = (o.scenarios ?? []).filter((id) => !allScenarios.some((s) => s.id === id));
  if (unknownScenarios.length > 0)
    throw new Error(
      `unknown scenario(s): ${unknownScenarios.join(', ')} (have ${allScenarios.map((s) => s.id).join(', ')})`,
    );
  // Opt-in candidates (the mapping cache row) start only when a selected scenario names them.
  const wanted = (c: (typeof CANDIDATES)[number]) =>
    !c.optIn || scenarios.some((s) => s.candidates?.includes(c.id) === true);
  const ids = (o.candidates ?? CANDIDATES.filter(wanted).map((c) => c.id)) as CandidateId[];
  const unknown = ids.filter((id) => !CANDIDATES.some((c) => c.id === id));
  if (unknown.length > 0) throw new Error(`unknown candidate(s): ${unknown.join(', ')}`);

  let backends: BenchBackends | undefined;
  const running: RunningCandidate[] = [];
  const stopAll = async () => {
    await Promise.all(running.map((c) => c.stop().catch(() => undefined)));
    await backends?.stop();
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  const loadStart = load1();
  const startedAt = new Date();
  try {
    backends = await startBenchBackends(scenarios, pinning, { log, useNginx: !o.nodeBackend });
    notes.push(...backends.notes);
    const base = { pinning, scenarios, porticoCommand: portico.command, porticoLogLevel: o.porticoLogLevel };
    const applicable = (s: BenchScenario, id: CandidateId) => {
      const optIn = CANDIDATES.find((x) => x.id === id)?.optIn === true;
      // An opt-in candidate named in --candidates runs on every scenario that names no candidates.
      return s.candidates !== undefined ? s.candidates.includes(id) : !optIn || o.candidates?.includes(id) === true;
    };
    // Why a (scenario, candidate) pair was not measured, and what a started candidate noted.
    const skip = new Map<string, string>();
    const notesOf = new Map<string, string[]>();
    const samples = new Map<string, RoundSample[]>();
    // Requests each pair was sent (probe, warm-up and rounds), to compare with the lines it logged.
    const sent = new Map<string, number>();
    const count = (key: string, n: number) => sent.set(key, (sent.get(key) ?? 0) + n);
    const pairs = scenarios.reduce((n, s) => n + ids.filter((id) => applicable(s, id)).length, 0);
    log(
      `load generator ${loadGeneratorVersion(gen)}, ${o.connections} connections, ${o.rounds} rounds of ${o.durationSec} s (+${o.warmupSec} s warm-up); ` +
        `${pairs} pairs, about ${Math.ceil((pairs * (o.rounds * o.durationSec + o.warmupSec + 3)) / 60)} min`,
    );
    for (const s of scenarios) {
      // Fresh processes for every scenario: memory one scenario leaves behind (the mapping
      // scenario buffers and parses bodies) must not show in the next one's peak RSS.
      const here: RunningCandidate[] = [];
      const ctx = { ...base, backend: backends.forScenario(s) };
      for (const id of ids) {
        const key = `${s.id}/${id}`;
        if (!applicable(s, id)) {
          skip.set(key, 'not applicable');
          continue;
        }
        try {
          const c = await startCandidate(id, ctx);
          running.push(c);
          notesOf.set(key, c.notes);
          // A combination that does not answer 200 is reported with the reason, not measured.
          const why = await probe(c, s);
          count(key, 1);
          if (why === undefined) here.push(c);
          else skip.set(key, why);
        } catch (err) {
          skip.set(key, `did not start: ${(err as Error).message.split('\n').slice(0, 4).join(' / ')}`);
          log(`! ${id} ${skip.get(key)}`);
        }
      }
      for (let round = 1; round <= o.rounds; round++) {
        // Rotate the order every round so no candidate always runs first (or right after a heavy one).
        const order = here.map((_, i) => here[(i + round - 1) % here.length]!);
        for (const c of order) {
          const key = `${s.id}/${c.id}`;
          if (round === 1) count(key, (await measure(gen, o, c, s, pinning?.loadCore, o.warmupSec)).requests);
          const canReset = resetPeakRss(c.pid);
          const r = await measure(gen, o, c, s, pinning?.loadCore, o.durationSec);
          count(key, r.requests);
          const sample: RoundSample = {
            ...r,
            round,
            peakRssMb: canReset || round === o.rounds ? peakRssMb(c.pid) : undefined,
            endRssMb: rssMb(c.pid),
          };
          samples.set(key, [...(samples.get(key) ?? []), sample]);
          log(
            `[round ${round}/${o.rounds}] ${s.id.padEnd(6)} ${c.label.padEnd(44)} ${Math.round(r.rps).toString().padStart(7)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms${r.badStatus + r.errors > 0 ? `  (${r.badStatus} non-2xx, ${r.errors} errors)` : ''}`,
          );
        }
      }
      const leaving = [...running];
      await Promise.all(leaving.map((c) => c.stop().catch(() => undefined)));
      // What Portico's stdout pipe carried: about one line per request, or fewer when it dropped.
      for (const c of leaving) {
        const logged = await c.logged;
        const requests = sent.get(`${s.id}/${c.id}`) ?? 0;
        if (logged === undefined) continue;
        const short = requests - logged.lines;
        c.notes.push(
          `stdout pipe: ${logged.lines.toLocaleString('en-US')} lines, ${(logged.bytes / 1e6).toFixed(1)} MB for ${requests.toLocaleString('en-US')} requests` +
            (short > 0 && o.porticoLogLevel === undefined
              ? ` (${short.toLocaleString('en-US')} fewer lines than requests: lines were dropped)`
              : ''),
        );
      }
      running.splice(0, running.length, ...running.filter((c) => !leaving.includes(c)));
    }

    const byScenario = new Map<string, Row[]>();
    for (const s of scenarios) {
      const rows: Row[] = [];
      for (const id of ids) {
        const label = CANDIDATES.find((c) => c.id === id)!.label;
        const reason = skip.get(`${s.id}/${id}`);
        if (reason === 'not applicable') {
          // A scenario that says why a candidate cannot take part gets an n/a row with that note.
          const why = s.notApplicable?.[id];
          if (why !== undefined) rows.push(summarise(id, label, [], [`n/a: ${why}`]));
          continue;
        }
        rows.push(
          summarise(id, label, samples.get(`${s.id}/${id}`) ?? [], [
            ...(notesOf.get(`${s.id}/${id}`) ?? []),
            ...(reason ? [reason] : []),
          ]),
        );
      }
      byScenario.set(s.id, rows);
    }
    const loadEnd = load1();
    const command = `npm run bench${process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : ''}`;
    const header = [
      `- command: \`${command}\``,
      `- date: ${startedAt.toISOString()}; commit ${machine.commit}${machine.dirty ? ' with uncommitted changes' : ''}`,
      `- machine: ${machine.nproc} CPUs, ${machine.cpuModel}; Linux ${machine.kernel}; Node ${machine.node}`,
      `- load: ${loadGeneratorVersion(gen)}, ${o.connections} connections, 1 thread; ${o.rounds} interleaved rounds of ${o.durationSec} s, medians; ${o.warmupSec} s warm-up per pair`,
      `- pinning: ${pinning ? `proxy on core ${pinning.proxyCore}; load generator, backend and Portico's log reader on core ${pinning.loadCore}` : 'none'}`,
      `- backend: ${backends.description}`,
      `- Portico: \`node ${portico.command
        .slice(1)
        .map((a) => (a.startsWith(ROOT) ? a.slice(ROOT.length + 1) : a))
        .join(
          ' ',
        )} start\`, default settings${metricsSwitch(false) ? ' but metrics off outside the metrics row' : ''}; ${o.porticoLogLevel ? `PORTICO_LOG_LEVEL=${o.porticoLogLevel}` : 'default log level (info, one access line per request)'}; stdout into a pipe (FIFO) read by \`wc -lc\`, as a container runtime collects logs`,
      `- backend direct / floor: ${scenarios
        .filter((s) => s.candidates === undefined || s.candidates.includes('node-floor'))
        .map((s) => `${s.id} ${headroom(byScenario.get(s.id) ?? []).line.replace('backend direct / floor: ', '')}`)
        .join('; ')}`,
      `- 1-minute load average: ${loadStart.toFixed(2)} at start, ${loadEnd.toFixed(2)} at end (above ~1 means other work shared the CPUs; only ratios from one run count)`,
      ...notes.map((n) => `- note: ${n}`),
    ].join('\n');
    const sections = scenarios
      .map(
        (s) => `### ${s.title}\n\n${table(byScenario.get(s.id) ?? [])}\n\n${headroom(byScenario.get(s.id) ?? []).line}`,
      )
      .join('\n\n');
    const goalsMd = goalsTable(goals(byScenario));
    process.stdout.write(`\n${header}\n\n${sections}\n\n${goalsMd}\n`);

    if (o.write) {
      const dir = resolve(ROOT, 'bench/results');
      mkdirSync(dir, { recursive: true });
      const date = startedAt.toISOString().slice(0, 10);
      let file = resolve(dir, `${date}-${machine.commit}${o.quick ? '-quick' : ''}.md`);
      for (let n = 2; existsSync(file); n++)
        file = resolve(dir, `${date}-${machine.commit}${o.quick ? '-quick' : ''}-${n}.md`);
      const rawRounds = scenarios
        .map((s) => `### ${s.title}\n\n${roundsTable(byScenario.get(s.id) ?? [])}`)
        .join('\n\n');
      const yaml = porticoYaml('127.0.0.1:BACKEND_PORT', scenarios, {});
      writeFileSync(
        file,
        `# Load benchmark ${date} (${machine.commit})\n\n${header}\n\n## Medians\n\n${sections}\n\n## Goals\n\n${goalsMd}\n\n## Every round\n\n${rawRounds}\n\n## Portico configuration (public candidate)\n\n\`\`\`yaml\n${yaml}\`\`\`\n`,
      );
      log(`\nwritten: ${file.slice(ROOT.length + 1)}`);
    }
    return 0;
  } finally {
    await stopAll();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`bench: ${(err as Error).message}`);
    process.exit(1);
  },
);
