/**
 * What a no-op plugin at every stage costs one request's pipeline, in process and without the
 * network (docs/plugins.md "Performance"): the layers of one route built with and without the
 * plugin, run over fresh exchanges to an endpoint that only calls the head hook, in interleaved
 * rounds. The figure that matters is the difference in ns per request, to set against the whole
 * request's CPU time (docs/performance.md); a loaded machine moves both sides alike. Beside it,
 * the scavenges per 10,000 requests of each side: what the plugin's allocations cost the garbage
 * collector, which a loaded machine does not move at all (under the gateway's own V8 settings, so
 * that the young generation has the gateway's size).
 *   node --import tsx bench/micro/plugin-stages.ts [--rounds 6] [--requests 200000]
 */
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { applyV8Tuning } from '../../src/cli/v8-tuning.js';
import { loadConfigText } from '../../src/config/load.js';
import { createUpstreamRegistry } from '../../src/upstream/upstream.js';
import { createMappingCache } from '../../src/mapping/cache.js';
import { createEventBus } from '../../src/observability/events.js';
import { createLogger } from '../../src/observability/logger.js';
import { createPipelineDeps, routeLayers } from '../../src/pipeline/build.js';
import { compose } from '../../src/pipeline/compose.js';
import type { Exchange, Step } from '../../src/pipeline/types.js';
import { createExchange } from '../../src/pipeline/exchange.js';
import type { LoadedPlugin } from '../../src/plugins/types.js';
// @ts-expect-error: plain JavaScript without types, as a built gateway loads it
import noop from '../noop-plugin.mjs';
import { fakeRequest, fakeResponse } from '../../test/support/exchanges.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '16' }, requests: { type: 'string', default: '30000' } },
});
// The gateway's young generation and pretenuring (src/cli/v8-tuning.ts): scavenges count as in it.
applyV8Tuning(process.execArgv, process.env.NODE_OPTIONS);
const rounds = Number(values.rounds);
const requests = Number(values.requests);

const ROUTE = '  - { method: GET, route: /small, service: "127.0.0.1:1", path: /small }';
const upstreams = createUpstreamRegistry({ connections: 1 });

function pipeline(withPlugin: boolean): { step: Step; route: Exchange['route'] } {
  const yaml = withPlugin
    ? `plugins:\n  - { name: noop, module: ./noop.mjs }\nconfig:\n  plugins: [noop]\nroutes:\n${ROUTE}\n`
    : `routes:\n${ROUTE}\n`;
  const loaded = loadConfigText(yaml, 'bench.yaml', {});
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  const lp: LoadedPlugin = {
    name: 'noop',
    plugin: noop as LoadedPlugin['plugin'],
    options: undefined,
    timeoutMs: 1000,
    from: 'noop',
  };
  const deps = createPipelineDeps(loaded.config, {
    upstreams,
    events: createEventBus(),
    logger: createLogger({ level: 'silent' }),
    mappingCache: createMappingCache(loaded.config.settings.mappingCache),
    plugins: new Map(withPlugin ? [['noop', lp]] : []),
  });
  const route = deps.config.routes[0]!;
  // The endpoint's part of a plugin's work: the head hook, as the backend call runs it.
  const end: Step = (ex: Exchange) => {
    const hook = ex.onResponseHead;
    if (hook !== undefined) hook.onResponseHead(200, { 'content-type': 'application/json' });
    return Promise.resolve();
  };
  return { step: compose(routeLayers(route, deps), end), route };
}

/** Scavenges (minor collections) so far: what a run allocated, counted by the collector. */
let scavenges = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries())
    if ((entry as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR)
      scavenges++;
}).observe({ entryTypes: ['gc'] });

/** Settles the observer's pending entries: they are delivered after the run's last scavenge. */
const gcSettled = () => new Promise<void>((resolve) => setTimeout(resolve, 20));

async function run({ step, route }: { step: Step; route: Exchange['route'] }): Promise<{ ns: number; gcs: number }> {
  await gcSettled();
  const before = scavenges;
  // CPU time, not wall time: on a shared machine the process is descheduled at random.
  const started = process.cpuUsage();
  for (let i = 0; i < requests; i++) {
    // The slot of the gateway's response classes (response/error-hooks.ts).
    const res = Object.assign(fakeResponse().res, { errorHook: undefined });
    await step(createExchange(route, fakeRequest({ host: 'gw' }), res, undefined, `r${i}`, {}, ''));
  }
  const used = process.cpuUsage(started);
  await gcSettled();
  return { ns: ((used.user + used.system) * 1000) / requests, gcs: ((scavenges - before) * 10_000) / requests };
}

const plain = pipeline(false);
const plugged = pipeline(true);

const diffs: number[] = [];
const gcs = { without: 0, with: 0 };
for (let r = 0; r < rounds; r++) {
  const a = await run(plain);
  const b = await run(plugged);
  diffs.push(b.ns - a.ns);
  gcs.without += a.gcs;
  gcs.with += b.gcs;
  console.log(
    `round ${r + 1}: without ${a.ns.toFixed(0)} ns/request, with ${b.ns.toFixed(0)} ns/request, +${(b.ns - a.ns).toFixed(0)} ns; ` +
      `scavenges per 10k requests ${a.gcs.toFixed(1)} without, ${b.gcs.toFixed(1)} with`,
  );
}
diffs.sort((x, y) => x - y);
console.log(
  `median cost of a no-op plugin at every stage: ${diffs[Math.floor(diffs.length / 2)]!.toFixed(0)} ns/request; ` +
    `scavenges per 10k requests ${(gcs.without / rounds).toFixed(1)} without, ${(gcs.with / rounds).toFixed(1)} with`,
);
await upstreams.close();
