/**
 * The timing loop of the microbenchmarks: warm up, then run the function in
 * batches on `process.hrtime.bigint()` until the time budget is spent, and report ops/s and ns/op.
 * A sink keeps every result alive so V8 cannot drop the measured work as dead code.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface MicroResult {
  readonly name: string;
  readonly ops: number;
  readonly nsPerOp: number;
}

/** A group of measurements, run by bench/micro/run.ts or by its own file. */
export interface MicroSuite {
  readonly title: string;
  run(budgetMs: number): MicroResult[] | Promise<MicroResult[]>;
}

let sink: unknown;

/** Time budget per measurement: `MICRO_MS` (default 1000 ms). */
export function budgetMs(): number {
  const raw = Number(process.env.MICRO_MS);
  return Number.isFinite(raw) && raw >= 50 ? raw : 1000;
}

/** Runs `fn` for about `budgetMs` (after a warm-up of a fifth of it) and returns its rate. */
export function measure(name: string, fn: () => unknown, budget: number): MicroResult {
  const warmEnd = process.hrtime.bigint() + BigInt(Math.round(budget * 0.2 * 1e6));
  let batch = 1;
  // Warm up and size the batch so one batch takes at least ~5 ms (clock reads stay negligible).
  while (process.hrtime.bigint() < warmEnd) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) sink = fn();
    if (process.hrtime.bigint() - t0 < 5_000_000n) batch *= 2;
  }
  const budgetNs = BigInt(Math.round(budget * 1e6));
  let ops = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0n;
  while (elapsed < budgetNs) {
    for (let i = 0; i < batch; i++) sink = fn();
    ops += batch;
    elapsed = process.hrtime.bigint() - start;
  }
  const ns = Number(elapsed);
  return { name, ops: (ops * 1e9) / ns, nsPerOp: ns / ops };
}

/** The sink, read once so the compiler cannot prove the results unused. */
export function consumeSink(): unknown {
  return sink;
}

/** One aligned line per result. */
export function formatResults(title: string, results: readonly MicroResult[]): string {
  const width = Math.max(...results.map((r) => r.name.length));
  const lines = results.map(
    (r) =>
      `  ${r.name.padEnd(width)}  ${Math.round(r.ops).toLocaleString('en-US').padStart(13)} ops/s  ${r.nsPerOp.toFixed(r.nsPerOp < 100 ? 1 : 0).padStart(9)} ns/op`,
  );
  return `${title}\n${lines.join('\n')}\n`;
}

/** True when `metaUrl` is the file node was started with (not imported by another file). */
export function isMain(metaUrl: string): boolean {
  return process.argv[1] !== undefined && fileURLToPath(metaUrl) === resolve(process.argv[1]);
}

/** Standalone entry of one suite file. */
export async function runStandalone(suite: MicroSuite): Promise<void> {
  process.stdout.write(formatResults(suite.title, await suite.run(budgetMs())));
}
