/**
 * Where a reload of many routes holds the event loop (docs/performance.md "Scale in routes"): in
 * this process, with the V8 settings `portico start` applies (src/cli/v8-tuning.ts) and the
 * reload `portico start` runs on SIGHUP (`reloadFromFile`: parse and validation on the worker,
 * compile and build in slices). For each reload after a first one that starts the worker:
 *
 * - wall ms, and the main thread's busy ms (event-loop utilization, this thread only);
 * - on Linux, the ms the main thread waited runnable for a CPU (/proc/thread-self/schedstat): the
 *   share of the reload another thread (the worker, the machine's others) held its core;
 * - the longest gap of a 1 ms timer (what a request arriving then waits at worst), and the
 *   event-loop delay histogram's p99 and max (perf_hooks.monitorEventLoopDelay);
 * - the garbage collections of this thread from the signal to `--settle-ms` after the swap (the
 *   old configuration's collection comes after it): count, sum and longest pause, minor and major;
 * - the heap used before, at the end and after the settle.
 *
 * - with `--allocations`, one more reload under the sampling heap profiler (every object, collected
 *   or not): the bytes this thread allocated, per route, which noise does not move.
 *
 * Times are CPU-bound and the machine may be shared: compare builds by interleaving runs, and read
 * the GC counts and bytes, which noise does not move. `taskset -c 0 node ...` puts the worker on
 * the main thread's core, as a gateway pinned to one core has it.
 *
 *   node --expose-gc --import tsx bench/reload-stalls.ts [--routes 10000] [--reloads 5] [--settle-ms 500]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay, PerformanceObserver, performance, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { applyV8Tuning } from '../src/cli/v8-tuning.js';
import { watchTimerGaps } from './lib/timer-gaps.js';

const { values } = parseArgs({
  options: {
    routes: { type: 'string', default: '10000' },
    reloads: { type: 'string', default: '5' },
    'settle-ms': { type: 'string', default: '500' },
    allocations: { type: 'boolean', default: false },
  },
});
applyV8Tuning(process.execArgv, process.env.NODE_OPTIONS);
// The gateway's modules after the tuning, as `portico start` loads them: loading them is a long
// synchronous stretch that grew the young generation to 32 MB before a cap set later could act.
const { loadConfig } = await import('../src/config/load.js');
const { createGateway } = await import('../src/gateway.js');
const { createLogger } = await import('../src/observability/logger.js');
const { reloadFromFile } = await import('../src/ops/reload.js');
const { mixedRoutesYaml } = await import('./lib/routes-yaml.js');
const count = Number(values.routes);
const settleMs = Number(values['settle-ms']);
const dir = mkdtempSync(join(tmpdir(), 'portico-reload-stalls-'));
const file = join(dir, 'routes.yaml');
writeFileSync(file, mixedRoutesYaml(count, '127.0.0.1:9'));
const loaded = loadConfig(file, {});
if (!loaded.ok) throw new Error('the generated configuration does not load');
const gateway = createGateway({ config: loaded.config, logger: createLogger({ level: 'silent' }) });

interface GcStats {
  n: number;
  ms: number;
  max: number;
}
const gcs: { kind: 'minor' | 'major'; ms: number }[] = [];
const observer = new PerformanceObserver((list) => {
  for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[])
    // kind 1 is a scavenge (NODE_PERFORMANCE_GC_MINOR); 2 major, 4 incremental, 8 weak callbacks.
    gcs.push({ kind: e.detail?.kind === 1 ? 'minor' : 'major', ms: e.duration });
});
observer.observe({ entryTypes: ['gc'] });
const stats = (kind: 'minor' | 'major'): GcStats => {
  const of = gcs.filter((g) => g.kind === kind);
  return { n: of.length, ms: of.reduce((s, g) => s + g.ms, 0), max: Math.max(0, ...of.map((g) => g.ms)) };
};

const youngMb = () => (getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0) / 1048576;

/** ns this thread has waited runnable for a CPU (Linux schedstat, field 2); 0 elsewhere. */
const waitedNs = () => {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1]);
  } catch {
    return 0;
  }
};

async function oneReload() {
  const youngBefore = youngMb();
  const heapBefore = process.memoryUsage().heapUsed;
  gcs.length = 0;
  const stopGaps = watchTimerGaps();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const elu = performance.eventLoopUtilization();
  const waited = waitedNs();
  const started = performance.now();
  if (!(await reloadFromFile(gateway, file, {}, 'bench'))) throw new Error('reload failed');
  const wallMs = performance.now() - started;
  const busyMs = performance.eventLoopUtilization(elu).active;
  const waitMs = (waitedNs() - waited) / 1e6;
  const heapEnd = process.memoryUsage().heapUsed;
  await new Promise((r) => setTimeout(r, settleMs));
  const stallMs = stopGaps();
  delay.disable();
  await new Promise((r) => setImmediate(r)); // the observer's last entries
  const heapSettled = process.memoryUsage().heapUsed;
  return {
    wallMs,
    busyMs,
    waitMs,
    stallMs,
    delayP99: delay.percentile(99) / 1e6,
    delayMax: delay.max / 1e6,
    minor: stats('minor'),
    major: stats('major'),
    young: `${youngBefore} / ${youngMb()}`,
    mb: [heapBefore, heapEnd, heapSettled].map((b) => (b / 1048576).toFixed(0)).join(' / '),
  };
}

/** Bytes allocated on this thread by one reload (sampled every 1 KB on average), as `N MB, N B/route`. */
async function allocatedBytes(): Promise<string> {
  const session = new Session();
  session.connect();
  const flags = { includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
  await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, ...flags } as never);
  if (!(await reloadFromFile(gateway, file, {}, 'bench'))) throw new Error('reload failed');
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  type Node = { selfSize: number; children: Node[] };
  const sum = (n: Node): number => n.children.reduce((s, c) => s + sum(c), n.selfSize);
  const bytes = sum(profile.head as Node);
  return `${(bytes / 1048576).toFixed(1)} MB, ${(bytes / count).toFixed(0)} B/route`;
}

await oneReload(); // starts the worker
const f = (x: number) => x.toFixed(1);
console.log(`reload-stalls: ${count} routes, Node ${process.version}, settle ${settleMs} ms`);
console.log(
  '| reload | wall ms | main busy ms | main waiting for a CPU ms | longest gap ms | delay p99 / max ms | minor GC n / sum / max ms | major GC n / sum / max ms | heap MB before / end / settled | young generation MB before / after |',
);
console.log('|---|---:|---:|---:|---:|---|---|---|---|---|');
for (let i = 1; i <= Number(values.reloads); i++) {
  const r = await oneReload();
  const gc = (s: GcStats) => `${s.n} / ${f(s.ms)} / ${f(s.max)}`;
  console.log(
    `| ${i} | ${f(r.wallMs)} | ${f(r.busyMs)} | ${f(r.waitMs)} | ${f(r.stallMs)} | ${f(r.delayP99)} / ${f(r.delayMax)} | ${gc(r.minor)} | ${gc(r.major)} | ${r.mb} | ${r.young} |`,
  );
}
if (values.allocations) console.log(`allocated by this thread in a reload: ${await allocatedBytes()}`);
observer.disconnect();
await gateway.close();
rmSync(dir, { recursive: true, force: true });
// The configuration worker is kept warm for a minute (unref'd); nothing else holds the process.
