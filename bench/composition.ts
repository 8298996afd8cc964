/**
 * What composition costs (docs/aggregation.md, docs/mapping.md "Batched mapping",
 * docs/field-filtering.md): latency and requests/s of composed routes next to the plain routes
 * they are made of, measured in one run through one Portico process, in rounds that rotate the
 * variants so that drift hits them all alike.
 *
 *   node --import tsx bench/composition.ts [--duration 5] [--rounds 3] [--connections 10] [--out FILE]
 *
 * Goals (issue "Composition and policy"):
 * - batched mapping, 100 items over 100 distinct values with `max: 100` and no cache: 1 batch call
 *   per request (read from the gateway's own metrics), p50 within 1.2x of the primary call's p50
 *   plus the batch endpoint's p50, each measured through a plain route;
 * - aggregation of 3 backends answering after 20 ms: p50 within 1.25x of one such call's p50;
 * - field filtering of a 20 KB JSON answer: at least 0.80x the requests/s of the same route
 *   without filtering.
 * Goals (JSON shaping as fast as the obvious code): the filtered route and the batched
 * route at least 1.0x the requests/s of a hand-written Node proxy doing the same with JSON.parse,
 * delete/rename or the batch splice, and JSON.stringify (bench/node-json-shaping.ts, its rows
 * `hand-written`), on the same backend in the same run; the batched route's p50 at most 1.0x its.
 * Each row also reports the CPU its proxy's process (all threads) spent per request, from
 * /proc/PID/stat around each round: the requests per CPU second of the two proxies compare the
 * work itself, where their requests/s also carry the machine's load of the moment.
 * The backend is bench/backend.ts (node:http: the batch and delayed endpoints are dynamic), on the
 * load core. Portico, and the hand-written proxy, are pinned to core 0 when `taskset` exists,
 * Portico with its log level at `warn`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  CACHE_DIR,
  ROOT,
  cpuSeconds,
  freePort,
  porticoStartArgs,
  startProcess,
  transpileEntry,
  type Started,
} from './lib/processes.js';
import { loadGeneratorVersion } from './lib/load.js';
import { getLoad, rotateRows, rowFlags } from './lib/rotating-rows.js';
import { describeMachine } from './lib/machine.js';
import { emitResults, median, runBench } from './lib/report.js';

interface Variant {
  readonly id: string;
  readonly label: string;
  /** Client path under /api. */
  readonly path: string;
  /** Which proxy answers: Portico (default) or the hand-written one of bench/node-json-shaping.ts. */
  readonly via?: 'hand';
}

const IDS = Array.from({ length: 100 }, (_, i) => i).join(',');

const VARIANTS: readonly Variant[] = [
  { id: 'primary', label: 'primary call alone: 100 items (plain route)', path: '/items' },
  { id: 'batch-endpoint', label: 'batch endpoint alone: 100 users (plain route)', path: '/users-batch' },
  { id: 'batched', label: 'batched mapping: 100 items, 100 values, max 100', path: '/batched' },
  { id: 'unbatched', label: 'the same mapping without batch: 100 calls', path: '/unbatched' },
  { id: 'single-20ms', label: 'one backend answering after 20 ms (plain route)', path: '/slow' },
  { id: 'aggregate', label: 'aggregation of 3 backends answering after 20 ms', path: '/aggregate' },
  { id: 'records', label: '20 KB JSON (plain route)', path: '/records' },
  { id: 'filtered', label: '20 KB JSON with response.deny and rename', path: '/records-filtered' },
  {
    id: 'filtered-hand',
    label: 'hand-written: the same filter with JSON.parse, delete, JSON.stringify',
    path: '/records-filtered',
    via: 'hand',
  },
  {
    id: 'batched-hand',
    label: 'hand-written: the same batched mapping with JSON.parse, splice, JSON.stringify',
    path: '/batched',
    via: 'hand',
  },
];

function yamlFor(backend: string): string {
  return `routes:
  - { method: GET, route: /items, service: ${backend}, path: "/items?n=100&distinct=100" }
  - { method: GET, route: /users-batch, service: ${backend}, path: "/users?ids=${IDS}" }
  - method: GET
    route: /batched
    service: ${backend}
    path: "/items?n=100&distinct=100"
    mapping:
      - path: "/users/{authorId}"
        service: ${backend}
        tag: author
        batch: { path: "/users?ids={values}", key: id, max: 100 }
  - method: GET
    route: /unbatched
    service: ${backend}
    path: "/items?n=100&distinct=100"
    mapping:
      - { path: "/users/{authorId}", service: ${backend}, tag: author }
  - { method: GET, route: /slow, service: ${backend}, path: /delay/20/small }
  - method: GET
    route: /aggregate
    backends:
      - { service: ${backend}, path: /delay/20/small, group: a }
      - { service: ${backend}, path: /delay/20/small, group: b }
      - { service: ${backend}, path: /delay/20/small, group: c }
  - { method: GET, route: /records, service: ${backend}, path: /records }
  - method: GET
    route: /records-filtered
    service: ${backend}
    path: /records
    response:
      deny: [passwordHash, address.zip]
      rename: { name: fullName }
config:
  limits: { connectionsPerOrigin: 256 }
`;
}

/** A counter's value in a Prometheus text exposition, summed over the series that match. */
function counter(text: string, name: string, match: string): number {
  let total = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) && line.includes(match)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  return total;
}

async function main(): Promise<void> {
  const flags = rowFlags({ connections: '10' });
  const { durationSec, rounds, connections, pinning, loadgen } = flags;
  const started: Started[] = [];
  try {
    const backend = await startProcess({
      name: 'backend',
      command: process.execPath,
      args: [transpileEntry(resolve(ROOT, 'bench/backend.ts')), '0'],
      core: pinning?.loadCore,
      ready: { kind: 'stdout-line' },
    });
    started.push(backend);
    mkdirSync(CACHE_DIR, { recursive: true });
    const file = resolve(CACHE_DIR, 'composition.yaml');
    writeFileSync(file, yamlFor(`127.0.0.1:${backend.port}`));
    const port = await freePort();
    started.push(
      await startProcess({
        name: 'portico',
        command: process.execPath,
        args: porticoStartArgs(file, port),
        core: pinning?.proxyCore,
        env: { PORTICO_LOG_LEVEL: 'warn' },
        ready: { kind: 'health', port, path: '/health' },
        timeoutMs: 30_000,
      }),
    );
    const hand = await startProcess({
      name: 'node-json-shaping',
      command: process.execPath,
      args: [transpileEntry(resolve(ROOT, 'bench/node-json-shaping.ts')), `http://127.0.0.1:${backend.port}`, '0'],
      core: pinning?.proxyCore,
      ready: { kind: 'stdout-line' },
    });
    started.push(hand);
    const base = `http://127.0.0.1:${port}`;
    const load = (v: Variant, seconds: number) =>
      getLoad(flags, `${v.via === 'hand' ? `http://127.0.0.1:${hand.port}` : base}/api${v.path}`, seconds);
    const metrics = async () => (await fetch(`${base}/metrics`)).text();

    let batchRequests = 0;
    let batchCalls = 0;
    // CPU of the proxy's own process per request, per round: the requests/s of one row moved by
    // up to 2x between rounds on the shared machine, the CPU a request costs far less.
    const cpuUs = new Map<string, number[]>(VARIANTS.map((v) => [v.id, []]));
    const portico = started[1]!;
    const timed = async (v: Variant, seconds: number) => {
      const pid = v.via === 'hand' ? hand.pid : portico.pid;
      const before = cpuSeconds(pid);
      const res = await load(v, seconds);
      if (seconds === durationSec)
        cpuUs.get(v.id)!.push(((cpuSeconds(pid) - before) * 1e6) / Math.max(1, res.requests));
      return res;
    };
    const figures = await rotateRows(VARIANTS, {
      rounds,
      durationSec,
      measure: async (v, seconds) => {
        if (v.id !== 'batched') return timed(v, seconds);
        const before = await metrics();
        const res = await timed(v, seconds);
        const after = await metrics();
        const route = 'route="/batched"';
        batchRequests +=
          counter(after, 'portico_request_duration_seconds_count', route) -
          counter(before, 'portico_request_duration_seconds_count', route);
        batchCalls +=
          counter(after, 'portico_mapping_calls_total', route) - counter(before, 'portico_mapping_calls_total', route);
        return res;
      },
      warmUp: (v) => load(v, 1),
    });
    const row = (id: string) => figures.get(id)!;
    const batchBudget = row('primary').p50 + row('batch-endpoint').p50;
    const batchRatio = row('batched').p50 / batchBudget;
    const aggRatio = row('aggregate').p50 / row('single-20ms').p50;
    const filterRatio = row('filtered').rps / row('records').rps;
    const filterVsHand = row('filtered').rps / row('filtered-hand').rps;
    const batchVsHand = row('batched').rps / row('batched-hand').rps;
    const batchP50VsHand = row('batched').p50 / row('batched-hand').p50;
    const cpu = (id: string) => median(cpuUs.get(id)!);
    const filterCpuVsHand = cpu('filtered-hand') / cpu('filtered');
    const batchCpuVsHand = cpu('batched-hand') / cpu('batched');
    const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
    const m = describeMachine();
    const lines = [
      `# Composition costs (${new Date().toISOString().slice(0, 10)}, ${m.commit}${m.dirty ? ', uncommitted changes' : ''})`,
      '',
      `Machine: ${m.cpuModel}, ${m.nproc} CPUs, kernel ${m.kernel}; Node ${m.node}; ${loadGeneratorVersion(loadgen)}.`,
      `Command: \`node --import tsx bench/composition.ts --duration ${durationSec} --rounds ${rounds} --connections ${connections}\`.`,
      `${connections} connections, ${rounds} rounds x ${durationSec} s per variant, rotating; ${pinning ? `Portico on core ${pinning.proxyCore}, backend and load on core ${pinning.loadCore}` : 'no CPU pinning'}. Medians of the rounds.`,
      '',
      '| variant | req/s | p50 ms | p99 ms | proxy CPU µs per request | errors + non-2xx |',
      '|---|---|---|---|---|---|',
      ...VARIANTS.map((v) => {
        const x = row(v.id);
        return `| ${v.label} | ${Math.round(x.rps)} | ${x.p50} | ${x.p99} | ${cpu(v.id).toFixed(0)} (${cpuUs
          .get(v.id)!
          .map((u) => u.toFixed(0))
          .join(', ')}) | ${x.bad} |`;
      }),
      '',
      `- Batched mapping: ${(batchCalls / Math.max(1, batchRequests)).toFixed(3)} batch calls per request (${batchCalls} calls, ${batchRequests} requests; goal 1); p50 ${row('batched').p50} ms = ${batchRatio.toFixed(2)}x (primary p50 + batch endpoint p50 = ${batchBudget.toFixed(2)} ms; goal <= 1.2x): ${verdict(batchRatio <= 1.2 && batchCalls === batchRequests)}.`,
      `- Aggregation of 3 x 20 ms: p50 ${aggRatio.toFixed(2)}x one 20 ms call (goal <= 1.25x): ${verdict(aggRatio <= 1.25)}.`,
      `- Field filtering of 20 KB: ${filterRatio.toFixed(2)}x the unfiltered route's req/s (goal >= 0.80x): ${verdict(filterRatio >= 0.8)}.`,
      `- Field filtering vs the hand-written proxy: ${filterVsHand.toFixed(2)}x its req/s (goal >= 1.0x): ${verdict(filterVsHand >= 1)}; ${filterCpuVsHand.toFixed(2)}x its requests per CPU second (${cpu('filtered').toFixed(0)} against ${cpu('filtered-hand').toFixed(0)} µs a request).`,
      `- Batched mapping vs the hand-written proxy: ${batchVsHand.toFixed(2)}x its req/s (goal >= 1.0x), p50 ${batchP50VsHand.toFixed(2)}x its p50: ${verdict(batchVsHand >= 1)}; ${batchCpuVsHand.toFixed(2)}x its requests per CPU second (${cpu('batched').toFixed(0)} against ${cpu('batched-hand').toFixed(0)} µs a request).`,
      '',
    ];
    emitResults(lines.join('\n'), flags.out);
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
}

runBench(main);
