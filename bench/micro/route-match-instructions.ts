/**
 * The rows of ./route-match.ts for callgrind, which counts instructions: repeatable on a loaded
 * machine, where times are not. Every row is warmed up (20,000 lookups each, so the shared call
 * sites see every row, as in route-match.ts), then each runs N lookups between two calls of
 * os.getPriority(), which callgrind is told to dump its counts before: one part per row, and a
 * first part (an empty function, the loop's own cost) to subtract. Bundled first, so valgrind does
 * not run the TypeScript loader:
 *
 *   npx esbuild bench/micro/route-match-instructions.ts --bundle --platform=node --format=esm \
 *     --outfile=/tmp/rmi.mjs --banner:js="import { createRequire } from 'module'; const require = createRequire(import.meta.url);"
 *   valgrind --tool=callgrind --dump-before=uv_os_getpriority --callgrind-out-file=/tmp/rmi.out \
 *     node --single-threaded /tmp/rmi.mjs 100000
 *   for i in $(seq 2 13); do grep -m1 '^summary:' /tmp/rmi.out.$i; done
 *
 * Part 2 is the empty row; parts 3 to 13 are the rows in the order printed below; a part's
 * summary / N is instructions per lookup (the empty row's included).
 */
import { getPriority } from 'node:os';
import { createRouteTable } from '../../src/router/route-table.js';
import { lookupRows } from './fixtures.js';

const rows = lookupRows(createRouteTable);
const n = Number(process.argv[2] ?? 100000);
const empty = (): undefined => undefined;
let sink: unknown;
for (const [, fn] of rows) for (let i = 0; i < 20000; i++) sink = fn();
for (let i = 0; i < 20000; i++) sink = empty();
getPriority();
for (let i = 0; i < n; i++) sink = empty();
getPriority();
for (const [, fn] of rows) {
  for (let i = 0; i < n; i++) sink = fn();
  getPriority();
}
if (sink === Symbol.for('never')) process.stdout.write('\n');
process.stdout.write(['empty', ...rows.map(([name]) => name)].join('\n') + '\n');
