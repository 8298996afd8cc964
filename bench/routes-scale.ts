/**
 * Scale in routes (docs/performance.md "Scale in routes"): configurations of 10, 1,000 and 10,000
 * routes mixing the four kinds (exact, parameter, prefix and host routes, a quarter each, as
 * bench/micro/fixtures.ts's 1,000-route table), and for each size:
 *
 * - load: the file read, validated and compiled (`loadConfig`, as `portico start`, `check` and a
 *   reload do), then the pipelines and the route table built (`createGateway`), in this process;
 * - memory: the heap and RSS the routes keep (after a full GC), per route, against 10 routes;
 * - lookup: ns per `match` for each kind, on paths made as a request makes them (new strings);
 * - start: `portico start` as a child process, from spawn to `/ready` answering (tsx included: the
 *   10-route row is the floor);
 * - reload: SIGHUP to the child's "reloaded" log line (both clocks are this machine's), each
 *   SIGHUP after one route's backend path was changed in the file (`--reload-change none`: the
 *   same file), so the reload keeps every other route (docs/operations.md "What a reload rebuilds");
 * - stall: the longest the event loop is held during a reload in this process, with the load and
 *   build each in one call (`loadConfig`, `gateway.reload`) and as a reload does them (parse and
 *   validation on a worker thread, the rest in slices: `loadConfigOffThread`, `reloadInSlices`),
 *   each building every route (no served configuration handed over): the worst case, a file whose
 *   every route or whose settings changed.
 *
 * Then a reload under load, on one route of the largest configuration for `--seconds` each:
 * - autocannon, once quiet and once with a SIGHUP every `--reload-every` seconds: req/s, the
 *   capacity a reload takes away. Its latencies are not the measure: closed-loop, a client waits
 *   for its answer before sending the next request, so a stall of the event loop delays only one
 *   request per connection (50 of some 80,000) and hides below its p99 (coordinated omission);
 * - the open-loop client (bench/open-loop-client.ts): first a sweep of short quiet runs at
 *   `--sweep-shares` of autocannon's capacity, for the highest rate below which every p99 stays
 *   within `--stable-factor` of the lowest rate's (beyond it the latency is a queue); then, at
 *   `--load-share` of that sustainable rate, `--rounds` rounds of a quiet run and a run with the
 *   SIGHUPs, interleaved: every request counted from when it was due, so a request held back by
 *   a reload shows in p99, p99.9 and max. The p99 ratio is of the two runs of each round; beside
 *   it, the same ratio on the gateway's own time of each request (its access log's `durationMs`).
 *
 * The backend is nginx when installed (one worker), else a node:http server in this process. The
 * one in this process answered from the event loop that also reads the gateway's log and runs
 * autocannon, and its pauses showed in every latency. Nothing is pinned unless `--pin` asks: the
 * gateway on one core, the backend and the open-loop client on the other. Pinned, the reload's
 * worker thread shares the gateway's core (as on a one-CPU container).
 *
 *   node --expose-gc --import tsx bench/routes-scale.ts [--sizes 10,1000,10000] [--seconds 10]
 *        [--reload-every 2] [--connections 50] [--load-share 0.55] [--sweep-shares 0.1,...,0.7]
 *        [--sweep-seconds 3] [--stable-factor 2] [--rounds 3] [--no-load] [--pin] [--reload-change route|none]
 *        [--rate N] [--dist DIR] [--gateway-node-options=--max-semi-space-size=4]
 *
 * `--rate N` skips the sweep and loads at N requests/s, so that runs (and builds) compare at one
 * load; `--dist DIR` runs the gateway of another build (`DIR/src/cli/main.js`, an older commit's
 * `dist/`) against this bench.
 *
 * `--gateway-node-options=...` are node's options for the gateway child (space-separated), for an A/B
 * of V8 settings the CLI cannot make at run time, such as the young generation's size.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/load.js';
import { loadConfigOffThread } from '../src/config/load-off-thread.js';
import { formatProblem } from '../src/config/problems.js';
import { createGateway } from '../src/gateway.js';
import { createRouteTable, type RouteTable } from '../src/router/route-table.js';
import { createLogger } from '../src/observability/logger.js';
import { detectPinning, pinned, porticoCli, ROOT } from './lib/processes.js';
import { findNginx, nginxVersion, startNginxBackend } from './lib/nginx.js';
import { percentile } from './lib/report.js';
import { autocannon, freePort, waitHealthy } from './lib/child-gateway.js';
import { runOpenLoop, type OpenLoopResult } from './lib/open-loop.js';
import { mixedRoutesYaml } from './lib/routes-yaml.js';
import { watchTimerGaps } from './lib/timer-gaps.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10,1000,10000' },
    seconds: { type: 'string', default: '10' },
    'reload-every': { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    'load-share': { type: 'string', default: '0.55' },
    'sweep-shares': { type: 'string', default: '0.1,0.2,0.3,0.4,0.5,0.6,0.7' },
    'sweep-seconds': { type: 'string', default: '3' },
    'stable-factor': { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    'no-load': { type: 'boolean', default: false },
    'gateway-node-options': { type: 'string', default: '' },
    pin: { type: 'boolean', default: false },
    'reload-change': { type: 'string', default: 'route' },
    rate: { type: 'string' },
    dist: { type: 'string' },
  },
});
const reloadChange = values['reload-change'];
if (reloadChange !== 'route' && reloadChange !== 'none') throw new Error('--reload-change is route or none');
const sizes = values.sizes.split(',').map(Number);
const gatewayNodeOptions = values['gateway-node-options'].split(' ').filter((o) => o !== '');
const seconds = Number(values.seconds);
const reloadEvery = Number(values['reload-every']);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

const dir = mkdtempSync(join(tmpdir(), 'portico-routes-scale-'));
const pinning = detectPinning(values.pin);
const nginx = findNginx();
const backend =
  nginx === undefined
    ? createServer((_req, res) => res.end('ok'))
    : await startNginxBackend(nginx, [], pinning?.loadCore, undefined, true);
if (backend instanceof Server) await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
const service = `127.0.0.1:${backend instanceof Server ? (backend.address() as AddressInfo).port : backend.port}`;
const silent = createLogger({ level: 'silent' });

function fileOf(count: number): string {
  const file = join(dir, `routes-${count}.yaml`);
  writeFileSync(file, mixedRoutesYaml(count, service));
  return file;
}

let edits = 0;
/**
 * What each SIGHUP reloads: with `--reload-change route` (the default) the file with one route's
 * backend path changed, as an operator's edit; with `none` the same file (a certificate rotation).
 */
function editBeforeReload(file: string, count: number): void {
  if (reloadChange === 'none') return;
  writeFileSync(file, mixedRoutesYaml(count, service).replace('path: "/e0/items"', `path: "/e0/items/v${++edits}"`));
}

interface InProcess {
  loadMs: number;
  buildMs: number;
  heapBytes: number;
  rssBytes: number;
  lookupNs: Record<string, number>;
  stallWholeMs: number;
  stallSlicedMs: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Load + build three times (the median), the memory kept, and the lookup cost of each kind. */
async function inProcess(count: number): Promise<InProcess> {
  const file = fileOf(count);
  const loads: number[] = [];
  const builds: number[] = [];
  let table: RouteTable | undefined;
  for (let round = 0; round < 3; round++) {
    let t = performance.now();
    const loaded = loadConfig(file, {});
    if (!loaded.ok) throw new Error(loaded.problems.map(formatProblem).join('\n'));
    loads.push(performance.now() - t);
    t = performance.now();
    const gateway = createGateway({ config: loaded.config, logger: silent });
    builds.push(performance.now() - t);
    await gateway.close();
    table = createRouteTable(loaded.config.routes.map((route) => ({ route: route as never, run: async () => {} })));
  }
  gc!();
  const before = process.memoryUsage();
  const loaded = loadConfig(file, {});
  if (!loaded.ok) throw new Error('unreachable');
  const gateway = createGateway({ config: loaded.config, logger: silent });
  gc!();
  const after = process.memoryUsage();
  // The longest stretch the event loop is held during a reload: whole (load and build in one
  // call each, as before) against a reload's own way (worker, then slices), the median of 3.
  const wholeStalls: number[] = [];
  const slicedStalls: number[] = [];
  for (let round = 0; round < 3; round++) {
    wholeStalls.push(
      await stallDuring(async () => {
        const next = loadConfig(file, {});
        if (next.ok) gateway.reload(next.config);
      }),
    );
    slicedStalls.push(
      await stallDuring(async () => {
        const next = await loadConfigOffThread(file, {});
        if (next.ok) await gateway.reloadInSlices(next.config);
      }),
    );
  }
  await gateway.close();
  const i = Math.floor(count / 8);
  const host = `t${i % 10 === 0 ? i + 1 : i}.example.com`;
  const lookupNs: Record<string, number> = {};
  for (const [kind, path] of [
    ['exact', `/api/e${i}/items`],
    ['param', `/api/p${i}/items/42`],
    ['prefix', `/api/s${i}/css/site.css`],
    ['host', `/api/h${i % 10 === 0 ? i + 1 : i}/items`],
  ] as const) {
    lookupNs[kind] = lookupCost(table!, path, host);
  }
  return {
    loadMs: median(loads),
    buildMs: median(builds),
    heapBytes: after.heapUsed - before.heapUsed,
    rssBytes: after.rss - before.rss,
    lookupNs,
    stallWholeMs: median(wholeStalls),
    stallSlicedMs: median(slicedStalls),
  };
}

/** The longest gap between ticks of a 1 ms timer while `run` runs, in ms. */
async function stallDuring(run: () => Promise<void>): Promise<number> {
  const stop = watchTimerGaps();
  await run();
  return stop();
}

/** ns per match, with the path and host as new strings each time (as a request brings them). */
function lookupCost(table: RouteTable, path: string, host: string): number {
  const paths = Array.from({ length: 256 }, () => Buffer.from(path).toString('latin1'));
  const hosts = Array.from({ length: 256 }, () => Buffer.from(host).toString('latin1'));
  const kind = table.match('GET', paths[0]!, hosts[0]).kind;
  if (kind !== 'found') throw new Error(`${host}${path}: ${kind}`);
  const n = 300_000;
  for (let k = 0; k < n; k++) table.match('GET', paths[k & 255]!, hosts[k & 255]);
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t = process.hrtime.bigint();
    for (let k = 0; k < n; k++) table.match('GET', paths[k & 255]!, hosts[k & 255]);
    runs.push(Number(process.hrtime.bigint() - t) / n);
  }
  return Math.min(...runs);
}

/** `portico start` as a child with its log on a pipe; resolves once `/ready` answers. */
async function startChild(file: string): Promise<{ child: ChildProcess; port: number; startMs: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(
    ...pinned(pinning?.proxyCore, process.execPath, [
      ...gatewayNodeOptions,
      ...(values.dist === undefined ? porticoCli() : [join(values.dist, 'src/cli/main.js')]),
      'start',
      '--config',
      file,
      '--port',
      String(port),
    ]),
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, PORTICO_LOG_LEVEL: 'info' } },
  );
  // The access log goes to stdout too: read it all, or a full pipe would stall the gateway.
  child.stdout!.resume();
  await waitHealthy(port);
  return { child, port, startMs: performance.now() - started };
}

/**
 * The `durationMs` of the child's access-log lines ("msg":"request") written between `start()` and
 * `stop()`; a line split across two reads of the pipe is joined first.
 */
function recordDurations(child: ChildProcess): { start(): void; stop(): number[] } {
  let rest = '';
  let taken: number[] | undefined;
  child.stdout!.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    if (taken === undefined) {
      // Not recording: only where the next line starts matters.
      const nl = text.lastIndexOf('\n');
      rest = nl < 0 ? rest + text : text.slice(nl + 1);
      return;
    }
    const lines = (rest + text).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('"msg":"request"')) continue;
      const m = /"durationMs":([0-9.]+)/.exec(line);
      if (m !== null) taken.push(Number(m[1]));
    }
  });
  return {
    start: () => void (taken = []),
    stop: () => {
      const out = taken ?? [];
      taken = undefined;
      return out;
    },
  };
}

/** SIGHUP to the "reloaded" log line, in ms. */
function reloadOnce(child: ChildProcess, file: string, count: number): Promise<number> {
  editBeforeReload(file, count);
  return new Promise((resolve) => {
    const sent = Date.now();
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        if (!line.includes('"reloaded"')) continue;
        child.stdout!.off('data', onData);
        resolve((JSON.parse(line) as { time: number }).time - sent);
      }
    };
    child.stdout!.on('data', onData);
    child.kill('SIGHUP');
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
console.log(
  `routes-scale: sizes ${sizes.join(', ')}; Node ${process.version}; each reload: ${reloadChange === 'route' ? 'one route changed' : 'the same file'}; gateway node options: ${gatewayNodeOptions.join(' ') || 'none'}; backend ${nginx === undefined ? 'node:http in this process' : nginxVersion(nginx)}; ${pinning ? `gateway on core ${pinning.proxyCore}, backend and open-loop client on core ${pinning.loadCore}` : 'no pinning'}`,
);
console.log(
  '| routes | load ms | build ms | heap MB | heap B/route | RSS MB | exact ns | param ns | prefix ns | host ns | start ms | reload ms | stall ms whole | stall ms sliced |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
let base: InProcess | undefined;
for (const count of sizes) {
  const p = await inProcess(count);
  base ??= p;
  const file = fileOf(count);
  const { child, startMs } = await startChild(file);
  const reloads = [];
  for (let i = 0; i < 3; i++) reloads.push(await reloadOnce(child, file, count));
  await stopChild(child);
  const perRoute = count === sizes[0] ? '-' : ((p.heapBytes - base.heapBytes) / (count - sizes[0]!)).toFixed(0);
  const ns = (k: string) => p.lookupNs[k]!.toFixed(0);
  console.log(
    `| ${count} | ${p.loadMs.toFixed(0)} | ${p.buildMs.toFixed(0)} | ${mb(p.heapBytes)} | ${perRoute} | ${mb(p.rssBytes)} | ${ns('exact')} | ${ns('param')} | ${ns('prefix')} | ${ns('host')} | ${startMs.toFixed(0)} | ${median(reloads).toFixed(0)} | ${p.stallWholeMs.toFixed(1)} | ${p.stallSlicedMs.toFixed(1)} |`,
  );
}

if (!values['no-load']) {
  const count = Math.max(...sizes);
  const file = fileOf(count);
  const { child, port } = await startChild(file);
  const url = `http://127.0.0.1:${port}/api/e${Math.floor(count / 8)}/items`;
  const connections = Number(values.connections);
  /** `run` with a SIGHUP every `--reload-every` seconds meanwhile; the reloads counted. */
  const withReloads = async <T>(run: () => Promise<T>): Promise<{ result: T; reloads: number }> => {
    let reloads = 0;
    let signals = 0;
    let allDone = () => {};
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n'))
        if (line.includes('"reloaded"') && ++reloads >= signals) allDone();
    };
    child.stdout!.on('data', onData);
    const timer = setInterval(() => {
      signals++;
      editBeforeReload(file, count);
      child.kill('SIGHUP');
    }, reloadEvery * 1000);
    const result = await run();
    clearInterval(timer);
    // A reload still under way ends before the next run, which it would otherwise slow down.
    if (reloads < signals) await new Promise<void>((resolve) => (allDone = resolve));
    child.stdout!.off('data', onData);
    return { result, reloads };
  };
  const quiet = await autocannon(url, [], connections, seconds);
  const busy = await withReloads(() => autocannon(url, [], connections, seconds));
  const open = (rate: number, durationSec = seconds): Promise<OpenLoopResult> =>
    runOpenLoop({ url, method: 'GET', headers: {}, rate, durationSec, connections: 256, core: pinning?.loadCore });

  // The open-loop rate: far from saturation, or the quiet p99 is a queue, not a latency. Quiet
  // runs of `--sweep-seconds` at rising shares of autocannon's capacity; the sustainable rate is
  // the highest whose p99 stays within `--stable-factor` of the lowest rate's p99, with no error;
  // the load is `--load-share` of it ("full load" in the issue's words: busy, not queueing).
  const sweep: { rate: number; r: OpenLoopResult }[] = [];
  for (const share of values.rate === undefined ? values['sweep-shares'].split(',').map(Number) : []) {
    const rate = Math.round(quiet.requests.average * share);
    sweep.push({ rate, r: await open(rate, Number(values['sweep-seconds'])) });
  }
  const floorP99 = sweep[0]?.r.p99Ms ?? 0;
  const isStable = (r: OpenLoopResult) =>
    r.p99Ms <= floorP99 * Number(values['stable-factor']) && r.errors === 0 && r.badStatus === 0;
  // The rates up to the first that is not stable.
  const firstUnstable = sweep.findIndex(({ r }) => !isStable(r));
  const stable = firstUnstable < 0 ? sweep : sweep.slice(0, Math.max(firstUnstable, 1));
  // `--rate`: the same load for runs to be compared, whatever a noisy sweep finds.
  const sustainable = stable.at(-1)?.rate ?? Number(values.rate);
  const rate = values.rate === undefined ? Math.round(sustainable * Number(values['load-share'])) : Number(values.rate);

  // Quiet and reloading runs at the same rate, interleaved round by round.
  // The gateway's own time of each request of a run (its access log's durationMs: request read to
  // answer finished), beside the client's: what the gateway held, without what came before it read
  // the request or after it wrote the answer.
  const spans = recordDurations(child);
  const spanP99 = (ms: number[]) =>
    percentile(
      ms.sort((a, b) => a - b),
      99,
    ) ?? 0;
  const rounds: {
    quiet: OpenLoopResult;
    busy: OpenLoopResult;
    reloads: number;
    gatewayQuiet: number;
    gatewayBusy: number;
  }[] = [];
  for (let round = 0; round < Number(values.rounds); round++) {
    spans.start();
    const q = await open(rate);
    const gatewayQuiet = spanP99(spans.stop());
    spans.start();
    const b = await withReloads(() => open(rate));
    const gatewayBusy = spanP99(spans.stop());
    rounds.push({ quiet: q, busy: b.result, reloads: b.reloads, gatewayQuiet, gatewayBusy });
  }
  await stopChild(child);
  console.log(`\nreload under load, ${count} routes, ${seconds} s each, SIGHUP every ${reloadEvery} s:`);
  console.log(`closed loop (autocannon, ${connections} connections): capacity`);
  console.log('| run | req/s | p99 ms (hides stalls) | max ms | non-2xx | errors |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, r] of [
    ['no reload', quiet],
    [`reloading (${busy.reloads} reloads)`, busy.result],
  ] as const)
    console.log(
      `| ${name} | ${r.requests.average.toFixed(0)} | ${r.latency.p99} | ${r.latency.max} | ${r.non2xx} | ${r.errors} |`,
    );
  console.log(`open loop, quiet, ${values['sweep-seconds']} s per rate: where the latency stays a latency`);
  console.log('| rate req/s | share of autocannon | p50 ms | p99 ms | max ms | errors | stable |');
  console.log('|---|---|---|---|---|---|---|');
  for (const { rate: r0, r } of sweep)
    console.log(
      `| ${r0} | ${(r0 / quiet.requests.average).toFixed(2)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.maxMs.toFixed(2)} | ${r.errors + r.badStatus} | ${stable.some((x) => x.r === r) ? 'yes' : 'no'} |`,
    );
  console.log(
    values.rate === undefined
      ? `sustainable ${sustainable} req/s; load ${rate} req/s (${values['load-share']} of it)`
      : `load ${rate} req/s (--rate)`,
  );
  console.log(`open loop at ${rate} req/s, quiet then reloading, per round: latency from due time`);
  console.log(
    '| round | quiet p50 | quiet p99 | reloading p50 | reloading p99 | p99.9 | max ms | reloads | errors | p99 ratio | gateway p99 quiet / reloading | gateway ratio |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  const ratios: number[] = [];
  const gatewayRatios: number[] = [];
  rounds.forEach(({ quiet: q, busy: b, reloads, gatewayQuiet, gatewayBusy }, i) => {
    const ratio = b.p99Ms / Math.max(q.p99Ms, 0.001);
    const gatewayRatio = gatewayBusy / Math.max(gatewayQuiet, 0.001);
    ratios.push(ratio);
    gatewayRatios.push(gatewayRatio);
    console.log(
      `| ${i + 1} | ${q.p50Ms.toFixed(2)} | ${q.p99Ms.toFixed(2)} | ${b.p50Ms.toFixed(2)} | ${b.p99Ms.toFixed(2)} | ${b.p999Ms.toFixed(2)} | ${b.maxMs.toFixed(2)} | ${reloads} | ${b.errors + b.badStatus + q.errors + q.badStatus} | ${ratio.toFixed(2)} | ${gatewayQuiet.toFixed(2)} / ${gatewayBusy.toFixed(2)} | ${gatewayRatio.toFixed(2)} |`,
    );
  });
  console.log(
    `p99 ratio (reloading / quiet, open loop), median of ${rounds.length} rounds: ${median(ratios).toFixed(2)}; on the gateway's own time (access log durationMs): ${median(gatewayRatios).toFixed(2)}`,
  );
}

if (backend instanceof Server) backend.close();
else await backend.stop();
rmSync(dir, { recursive: true, force: true });
