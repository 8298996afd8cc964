/**
 * `npm run bench:micro`: the microbenchmarks, in one process, one after the
 * other. Each prints ops/s and ns/op; `MICRO_MS=300 npm run bench:micro` shortens every
 * measurement (default 1000 ms; the whole run takes about 30 s). Figures drift between runs on
 * shared machines: compare before/after from the same machine and load.
 */
import { availableParallelism, cpus } from 'node:os';
import { suite as enrich } from './enrich.js';
import { suite as forwardHeaders } from './forward-headers.js';
import { budgetMs, consumeSink, formatResults } from './measure.js';
import { suite as routeMatch } from './route-match.js';
import { suite as urlTemplate } from './url-template.js';

const budget = budgetMs();
const started = Date.now();
process.stdout.write(
  `micro benchmarks: node ${process.version}, ${availableParallelism()} CPUs (${cpus()[0]?.model ?? 'unknown'}), ${budget} ms per measurement\n\n`,
);
for (const suite of [routeMatch, urlTemplate, forwardHeaders, enrich]) {
  process.stdout.write(formatResults(suite.title, await suite.run(budget)) + '\n');
}
if (consumeSink() === Symbol.for('never')) process.stdout.write('\n');
process.stdout.write(`done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
