/**
 * The focused benches' shared loop: their command-line flags, then every row warmed up once and
 * measured in rounds whose order rotates, so that drift (thermal, other load) reaches each row
 * alike; a row's figures are the medians of its rounds. Each bench keeps what is its own: the
 * processes it starts, what a row is, and the results text.
 */
import { parseArgs } from 'node:util';
import { pickLoadGenerator, runLoad, type LoadGenerator, type LoadResult } from './load.js';
import { detectPinning, type Pinning } from './processes.js';
import { median } from './report.js';

/** The flags every focused bench takes, read with its own defaults and extra flags. */
export interface RowFlags {
  readonly durationSec: number;
  readonly rounds: number;
  readonly connections: number;
  readonly loadgen: LoadGenerator;
  readonly pinning: Pinning | undefined;
  /** Where the results text is written besides stdout. */
  readonly out: string | undefined;
  /** Every flag as parsed, for a bench's own flags. */
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
}

type Extra = Record<string, { type: 'string' | 'boolean'; default?: string | boolean }>;

/**
 * `--duration`, `--rounds`, `--connections`, `--loadgen` and `--out`, plus `extra`.
 * @example const flags = rowFlags({ connections: '10' }, { candidates: { type: 'string' } });
 */
export function rowFlags(
  defaults: { duration?: string; rounds?: string; connections?: string } = {},
  extra: Extra = {},
): RowFlags {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: defaults.duration ?? '5' },
      rounds: { type: 'string', default: defaults.rounds ?? '3' },
      connections: { type: 'string', default: defaults.connections ?? '50' },
      loadgen: { type: 'string' },
      out: { type: 'string' },
      ...extra,
    },
  });
  return {
    durationSec: Number(values.duration),
    rounds: Number(values.rounds),
    connections: Number(values.connections),
    loadgen: pickLoadGenerator(values.loadgen as string | undefined),
    pinning: detectPinning(true),
    out: values.out as string | undefined,
    values,
  };
}

/** A GET load of `seconds` on `url` with the flags' connections, on the load's core. */
export function getLoad(flags: RowFlags, url: string, seconds: number, headers: Record<string, string> = {}) {
  return runLoad(flags.loadgen, {
    url,
    method: 'GET',
    headers,
    connections: flags.connections,
    durationSec: seconds,
    core: flags.pinning?.loadCore,
  });
}

/** A row's rounds and their medians. */
export interface RowFigures {
  readonly samples: readonly LoadResult[];
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  /** Socket errors, timeouts and non-2xx answers over every round. */
  readonly bad: number;
  /** The lowest and highest round's req/s, "min-max". */
  readonly spread: string;
}

export interface RotationPlan<R> {
  readonly rounds: number;
  readonly durationSec: number;
  /** One measured run of a row. */
  readonly measure: (row: R, seconds: number) => Promise<LoadResult>;
  /** The warm-up of a row (JIT, pools, caches filled), not counted; default: `measure` for 1 s. */
  readonly warmUp?: (row: R) => Promise<unknown>;
}

/** Warms every row up, runs the rotating rounds, and returns each row's figures by id. */
export async function rotateRows<R extends { readonly id: string }>(
  rows: readonly R[],
  plan: RotationPlan<R>,
): Promise<Map<string, RowFigures>> {
  for (const row of rows) await (plan.warmUp ?? ((r: R) => plan.measure(r, 1)))(row);
  const samples = new Map<string, LoadResult[]>(rows.map((r) => [r.id, []]));
  for (let round = 1; round <= plan.rounds; round++) {
    for (let i = 0; i < rows.length; i++) {
      const row = rows[(i + round) % rows.length]!;
      const res = await plan.measure(row, plan.durationSec);
      samples.get(row.id)!.push(res);
      process.stderr.write(
        `round ${round} ${row.id.padEnd(22)} ${Math.round(res.rps)} req/s p50 ${res.p50Ms} ms p99 ${res.p99Ms} ms\n`,
      );
    }
  }
  return new Map(rows.map((r) => [r.id, figures(samples.get(r.id)!)]));
}

function figures(samples: readonly LoadResult[]): RowFigures {
  const rps = samples.map((x) => Math.round(x.rps));
  return {
    samples,
    rps: median(samples.map((x) => x.rps)),
    p50: median(samples.map((x) => x.p50Ms)),
    p99: median(samples.map((x) => x.p99Ms)),
    bad: samples.reduce((n, x) => n + x.errors + x.badStatus, 0),
    spread: `${Math.min(...rps)}-${Math.max(...rps)}`,
  };
}
