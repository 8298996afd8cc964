/**
 * Turns rounds into the benchmark table: medians of the rounds, peak RSS, and ratios to the Node
 * floor and to @fastify/http-proxy. Only ratios from one run count: absolute figures drift 20% or
 * more between runs on shared machines.
 */
import { writeFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import type { LoadResult } from './load.js';

export interface RoundSample extends LoadResult {
  readonly round: number;
  /** VmHWM of the candidate process during this run (MB). */
  readonly peakRssMb: number | undefined;
  /** VmRSS right after this run (MB): growth across rounds shows here. */
  readonly endRssMb: number | undefined;
}

export interface Row {
  readonly id: string;
  readonly label: string;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly peakRssMb: number | undefined;
  readonly rounds: readonly RoundSample[];
  readonly notes: readonly string[];
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The `p`th percentile (0-100) of ascending `sorted`, nearest rank; undefined for none. */
export function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** One table row from a candidate's rounds. */
export function summarise(id: string, label: string, rounds: readonly RoundSample[], notes: readonly string[]): Row {
  const peaks = rounds.map((r) => r.peakRssMb).filter((v): v is number => v !== undefined);
  const allNotes = [...notes];
  const errors = rounds.reduce((n, r) => n + r.errors, 0);
  const bad = rounds.reduce((n, r) => n + r.badStatus, 0);
  if (bad > 0) allNotes.push(`${bad} non-2xx answers`);
  if (errors > 0) allNotes.push(`${errors} socket errors/timeouts`);
  return {
    id,
    label,
    rps: median(rounds.map((r) => r.rps)),
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    peakRssMb: peaks.length > 0 ? Math.max(...peaks) : undefined,
    rounds,
    notes: allNotes,
  };
}

const fmt = (n: number | undefined, digits: number) =>
  n === undefined || !Number.isFinite(n) ? 'n/a' : n.toFixed(digits);
const thousands = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');

/** A markdown table (readable in a terminal as well). */
export function table(rows: readonly Row[]): string {
  const floor = rows.find((r) => r.id === 'node-floor');
  const fastify = rows.find((r) => r.id === 'fastify');
  const duties = rows.find((r) => r.id === 'node-floor-duties');
  const ratio = (a: number, b: Row | undefined, pick: (r: Row) => number) => {
    const q = b === undefined ? Number.NaN : a / pick(b);
    return Number.isFinite(q) ? `${q.toFixed(2)}x` : 'n/a';
  };
  const out = [
    '| candidate | req/s | p50 ms | p99 ms | peak RSS MB | vs floor | vs floor + duties | vs fastify | p99 vs floor | notes |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    out.push(
      `| ${r.label} | ${thousands(r.rps)} | ${fmt(r.p50Ms, 2)} | ${fmt(r.p99Ms, 2)} | ${fmt(r.peakRssMb, 0)} | ${ratio(r.rps, floor, (x) => x.rps)} | ${ratio(r.rps, duties, (x) => x.rps)} | ${ratio(r.rps, fastify, (x) => x.rps)} | ${ratio(r.p99Ms, floor, (x) => x.p99Ms)} | ${r.notes.join('; ')} |`,
    );
  }
  return out.join('\n');
}

/** Every round's raw figures, for the results file. */
export function roundsTable(rows: readonly Row[]): string {
  const out = [
    '| candidate | round | req/s | p50 ms | p99 ms | peak RSS MB | RSS after MB | non-2xx | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    for (const s of r.rounds) {
      out.push(
        `| ${r.label} | ${s.round} | ${thousands(s.rps)} | ${fmt(s.p50Ms, 2)} | ${fmt(s.p99Ms, 2)} | ${fmt(s.peakRssMb, 0)} | ${fmt(s.endRssMb, 0)} | ${s.badStatus} | ${s.errors} |`,
      );
    }
  }
  return out.join('\n');
}

export interface GoalCheck {
  readonly goal: string;
  readonly value: string;
  readonly met: boolean | undefined;
}

/**
 * Below this "backend direct / floor" ratio the load side (load generator and backend sharing one
 * core) is close enough to its own limit to hold every candidate back, which squeezes their
 * ratios toward 1: such a run does not measure the proxies.
 */
export const MIN_HEADROOM = 2.5;

export interface Headroom {
  /** Median over the rounds of backend-direct req/s over Node-floor req/s in the same round. */
  readonly ratio: number | undefined;
  readonly perRound: readonly number[];
  readonly flagged: boolean;
  /** One line for the results. */
  readonly line: string;
}

/** "backend direct / floor" of one scenario, per round and as the median of the rounds. */
export function headroom(rows: readonly Row[]): Headroom {
  const backend = rows.find((r) => r.id === 'backend');
  const floor = rows.find((r) => r.id === 'node-floor');
  if (backend === undefined || floor === undefined || backend.rounds.length === 0 || floor.rounds.length === 0) {
    return {
      ratio: undefined,
      perRound: [],
      flagged: false,
      line: 'backend direct / floor: not measured (needs the backend and node-floor candidates)',
    };
  }
  const perRound = backend.rounds
    .map((b) => ({ b, f: floor.rounds.find((x) => x.round === b.round) }))
    .filter((x): x is { b: RoundSample; f: RoundSample } => x.f !== undefined && x.f.rps > 0)
    .map(({ b, f }) => b.rps / f.rps);
  const ratio = perRound.length > 0 ? median(perRound) : backend.rps / floor.rps;
  const flagged = !(ratio >= MIN_HEADROOM);
  const rounds = perRound.length > 1 ? ` (rounds: ${perRound.map((r) => `${r.toFixed(2)}x`).join(', ')})` : '';
  const flag = flagged
    ? ` **FLAGGED: under ${MIN_HEADROOM}x: the load generator and backend are near their own limit, so every candidate's figures are squeezed toward theirs; do not read this scenario's ratios as the proxies' (install nginx, or give the load side more CPU)**`
    : '';
  return { ratio, perRound, flagged, line: `backend direct / floor: ${ratio.toFixed(2)}x${rounds}${flag}` };
}

/** The goals, checked against this run's ratios. */
export function goals(byScenario: ReadonlyMap<string, readonly Row[]>): GoalCheck[] {
  const checks: GoalCheck[] = [];
  const rowOf = (scenario: string, id: string) => byScenario.get(scenario)?.find((r) => r.id === id);
  const ratioGoal = (goal: string, scenario: string, id: string, min: number, against = 'node-floor') => {
    const c = rowOf(scenario, id);
    const f = rowOf(scenario, against);
    const v = c !== undefined && f !== undefined ? c.rps / f.rps : undefined;
    checks.push({
      goal,
      value: v === undefined || !Number.isFinite(v) ? 'not measured' : `${v.toFixed(2)}x`,
      met: v === undefined || !Number.isFinite(v) ? undefined : v >= min,
    });
  };
  const titles: Record<string, string> = { small: 'small GET', large: '20 KB GET', post: '4 KB POST' };
  for (const [id, title] of Object.entries(titles)) {
    if (!byScenario.has(id)) continue;
    const h = headroom(byScenario.get(id) ?? []);
    checks.push({
      goal: `load side not the limit: backend direct >= ${MIN_HEADROOM}x Node floor (${title})`,
      value: h.ratio === undefined ? 'not measured' : `${h.ratio.toFixed(2)}x`,
      met: h.ratio === undefined ? undefined : !h.flagged,
    });
    ratioGoal(`public route >= 0.90x Node floor req/s (${title})`, id, 'portico', 0.9);
    ratioGoal(`public route >= 1.5x @fastify/http-proxy (${title})`, id, 'portico', 1.5, 'fastify');
    // Not an issue goal: the same floor paying for the same default output (bench/node-floor-duties.ts).
    if (rowOf(id, 'node-floor-duties') !== undefined)
      ratioGoal(
        `public route >= 0.90x Node floor + default duties (${title})`,
        id,
        'portico',
        0.9,
        'node-floor-duties',
      );
    const p = rowOf(id, 'portico');
    const f = rowOf(id, 'node-floor');
    const p99 = p !== undefined && f !== undefined ? p.p99Ms / f.p99Ms : undefined;
    const known = p99 !== undefined && Number.isFinite(p99);
    checks.push({
      goal: `p99 <= 1.2x Node floor's p99 (${title})`,
      value: known ? `${p99.toFixed(2)}x` : 'not measured',
      met: known ? p99 <= 1.2 : undefined,
    });
  }
  ratioGoal('HS256 route >= 0.85x Node floor (small GET)', 'small', 'portico-hs256', 0.85);
  // The memory goal is for proxying; the mapping scenario holds 1,000 mapping calls in
  // flight by design and is reported in its own table, not against this bound.
  const peaks = [...byScenario.entries()]
    .filter(([id]) => id !== 'mapping')
    .flatMap(([, rows]) => rows)
    .filter((r) => r.id.startsWith('portico'))
    .map((r) => r.peakRssMb)
    .filter((v): v is number => v !== undefined);
  const peak = peaks.length > 0 ? Math.max(...peaks) : undefined;
  checks.push({
    goal: 'Portico peak RSS under load < 120 MB (all but mapping)',
    value: peak === undefined ? 'not measured' : `${peak.toFixed(0)} MB`,
    met: peak === undefined ? undefined : peak < 120,
  });
  return checks;
}

export function goalsTable(checks: readonly GoalCheck[]): string {
  const out = ['| goal | this run | met |', '|---|---:|:---:|'];
  for (const c of checks) out.push(`| ${c.goal} | ${c.value} | ${c.met === undefined ? '-' : c.met ? 'yes' : 'no'} |`);
  return out.join('\n');
}

/** Prints a results text, and writes it to `out` too when given (bench/results/...). */
export function emitResults(text: string, out: string | undefined): void {
  process.stdout.write(text);
  if (out !== undefined) writeFileSync(resolvePath(out), text);
}

/** Runs a bench's main: a failure prints its stack and sets exit code 1. */
export function runBench(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  });
}
