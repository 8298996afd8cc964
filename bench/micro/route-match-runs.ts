/**
 * The rows of ./route-match.ts over several processes, one after another: each process's JIT
 * settles the lookup differently (the same build gave 192 to 315 ns for the 1,000-route
 * parameter row in six processes on a quiet machine), so one process's figure is one sample.
 *
 *   RUNS=10 MICRO_MS=1500 node --import tsx bench/micro/route-match-runs.ts
 *
 * Prints each row's median ns/op over the processes, its quartiles and its range.
 */
import { execFileSync } from 'node:child_process';
import { median, percentile } from '../lib/report.js';
import type { MicroResult } from './measure.js';

const runs = Number(process.env.RUNS ?? 10);
// Each process runs route-match.ts's suite and prints its results as JSON.
const child = `
  const { suite } = await import(${JSON.stringify(new URL('./route-match.ts', import.meta.url).href)});
  const { budgetMs } = await import(${JSON.stringify(new URL('./measure.ts', import.meta.url).href)});
  process.stdout.write(JSON.stringify(await suite.run(budgetMs())));`;
const rows = new Map<string, number[]>();
for (let run = 0; run < runs; run++) {
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], {
    encoding: 'utf8',
    env: process.env,
  });
  for (const r of JSON.parse(out) as MicroResult[])
    (rows.get(r.name) ?? rows.set(r.name, []).get(r.name)!).push(r.nsPerOp);
  process.stderr.write(`run ${run + 1} of ${runs}\n`);
}
const width = Math.max(...[...rows.keys()].map((name) => name.length));
process.stdout.write(`${'row'.padEnd(width)}  median ns  quartiles       range  (${runs} processes)\n`);
for (const [name, values] of rows) {
  const sorted = [...values].sort((a, b) => a - b);
  const q = (p: number) => percentile(sorted, p)!.toFixed(0);
  process.stdout.write(
    `${name.padEnd(width)}  ${median(values).toFixed(0).padStart(9)}  ${`${q(25)}-${q(75)}`.padStart(9)}  ${`${sorted[0]!.toFixed(0)}-${sorted.at(-1)!.toFixed(0)}`.padStart(10)}\n`,
  );
}
