/**
 * An open-loop load generator: requests sent at a constant rate whatever the answers do, each
 * latency counted from the moment its request was due (not from when it went out), so a slow
 * answer delays no later measurement and a stall of the server shows in every request it held
 * back (no coordinated omission). Run as a process of its own by bench/lib/open-loop.ts:
 *
 *   node open-loop-client.mjs --url URL --rate N --seconds S [--connections C] [--method POST]
 *        [--body-file FILE] [--header name:value]...
 *
 * Prints one line `OPEN_LOOP_JSON {...}` with the count, p50, p99, p99.9 and max in ms, the
 * errors (no answer) and the answers outside 2xx/3xx. Self-contained (only undici and node:
 * imports): bench/lib/processes.ts `transpileEntry` runs it without tsx.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Pool, type Dispatcher } from 'undici';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    method: { type: 'string', default: 'GET' },
    'body-file': { type: 'string' },
    header: { type: 'string', multiple: true, default: [] },
  },
});

const url = new URL(values.url ?? '');
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const body = values['body-file'] === undefined ? null : readFileSync(values['body-file']);
const headers: string[] = [];
for (const h of values.header ?? []) {
  const at = h.indexOf(':');
  headers.push(h.slice(0, at).trim(), h.slice(at + 1).trim());
}
// Enough connections that a request never waits for one at the offered rate: a wait would be
// the load generator's, not the server's.
const pool = new Pool(url.origin, { connections: Number(values.connections), pipelining: 1 });
const options: Dispatcher.RequestOptions = {
  method: values.method as Dispatcher.HttpMethod,
  path: url.pathname + url.search,
  headers,
  body,
};

const total = Math.round(rate * seconds);
const latencies = new Float64Array(total);
let done = 0;
let errors = 0;
let badStatus = 0;

function send(dueAt: number, i: number): void {
  pool.request(options).then(
    async (res) => {
      await res.body.dump();
      if (res.statusCode >= 400) badStatus++;
      latencies[i] = performance.now() - dueAt;
      finish();
    },
    () => {
      errors++;
      latencies[i] = Number.NaN;
      finish();
    },
  );
}

let resolveAll: () => void = () => {};
const all = new Promise<void>((r) => (resolveAll = r));
function finish(): void {
  if (++done === total) resolveAll();
}

const start = performance.now();
let sent = 0;
// A 1 ms tick sends every request due since the last one, each with its own due time.
const tick = setInterval(() => {
  const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate));
  for (; sent < due; sent++) send(start + (sent * 1000) / rate, sent);
  if (sent === total) clearInterval(tick);
}, 1);
if (total === 0) resolveAll();
await all;
await pool.close();

const ok = Array.from(latencies).filter((x) => !Number.isNaN(x));
ok.sort((a, b) => a - b);
const at = (q: number) => (ok.length === 0 ? 0 : ok[Math.min(ok.length - 1, Math.ceil(q * ok.length) - 1)]!);
const round = (x: number) => Math.round(x * 1000) / 1000;
process.stdout.write(
  `OPEN_LOOP_JSON ${JSON.stringify({
    requests: total,
    durationSec: (performance.now() - start) / 1000,
    p50Ms: round(at(0.5)),
    p99Ms: round(at(0.99)),
    p999Ms: round(at(0.999)),
    maxMs: round(at(1)),
    errors,
    badStatus,
  })}\n`,
);
