/**
 * What a configuration is served with, built beside the running one: its pipeline deps, every
 * route's pipeline, then the route table. Interruptible after each route (config/sliced-work.ts):
 * start-up runs it whole, a reload in slices of about a ms while the running configuration serves.
 *
 * A reload keeps what the file did not change (docs/operations.md "What a reload rebuilds"): when
 * the new configuration shares the running one's settings, consumers and origins (config/ keeps
 * those objects when their part of the file is the same: config/compile-memo.ts), its deps are the
 * running ones, every route config/ kept keeps its pipeline, and when the routes still take the
 * same requests (only backends, headers, limits changed) the served table is kept, its entries
 * given the changed routes at the swap.
 */
import type { CompiledConfig, RouteSpec } from '../config/types.js';
import { mapEach, runInSlices, type Work } from '../config/sliced-work.js';
import type { UpstreamRegistry } from '../upstream/upstream.js';
import { buildPipeline, type PipelineDeps, type SharedPipelineDeps } from '../pipeline/build.js';
import { compileRoutesWork } from '../pipeline/compile-route.js';
import { createPipelineDepsWork, routeNeeds, sameNeeds } from '../pipeline/deps.js';
import { retargetTable, routeTableWork, type RouteEntry, type RouteTable } from '../router/route-table.js';

/** A configuration's pipelines and route table, ready to be swapped in. */
export interface BuiltConfig {
  readonly deps: PipelineDeps;
  readonly table: RouteTable;
  /** Called at the swap, first, when `table` is the served one given new routes (retargetTable). */
  readonly retarget?: () => void;
}

/** The configuration served now and what it was built into. */
export interface ServedConfig {
  readonly config: CompiledConfig;
  readonly built: BuiltConfig;
}

export function* buildConfigWork(
  config: CompiledConfig,
  shared: SharedPipelineDeps,
  served?: ServedConfig,
): Work<BuiltConfig> {
  if (served !== undefined && sharesDeps(config, served.config)) return yield* buildOnServed(config, served);
  const deps = yield* createPipelineDepsWork(config, shared);
  const forPipelines = withoutRoutes(deps);
  const entries = yield* mapEach(deps.config.routes, (route) => ({ route, run: buildPipeline(route, forPipelines) }));
  return { deps, table: yield* routeTableWork(entries) };
}

const NO_ROUTES: PipelineDeps['config']['routes'] = Object.freeze([]);

/**
 * The deps a pipeline is built on: without the configuration's route list, which no layer reads, so
 * that a pipeline kept across reloads does not keep the route list of the load that built it alive.
 */
function withoutRoutes(deps: PipelineDeps): PipelineDeps {
  return { ...deps, config: { ...deps.config, routes: NO_ROUTES } };
}

/**
 * Whether `next` would make the deps `served` has: the same objects for the parts of the file the
 * deps are made of, the same needs of its routes, and no plugins (a reload imports them anew).
 */
function sharesDeps(next: CompiledConfig, served: CompiledConfig): boolean {
  return (
    next.settings === served.settings &&
    next.consumers === served.consumers &&
    next.upstreams === served.upstreams &&
    next.upstreamTls === served.upstreamTls &&
    next.plugins.length === 0 &&
    served.plugins.length === 0 &&
    sameNeeds(routeNeeds(next), routeNeeds(served))
  );
}

/** `config` built on the served deps: the routes config/ kept keep their compiled route and pipeline. */
function* buildOnServed(config: CompiledConfig, served: ServedConfig): Work<BuiltConfig> {
  const { deps: before, table } = served.built;
  // The served table's entries are in the order of its configuration's routes.
  const at = new Map<RouteSpec, number>();
  for (const [i, spec] of served.config.routes.entries()) {
    at.set(spec, i);
    yield;
  }
  const keptEntry = (spec: RouteSpec): RouteEntry | undefined => {
    const i = at.get(spec);
    return i === undefined ? undefined : table.entries[i];
  };
  const compiled = yield* compileRoutesWork(config, (spec) => keptEntry(spec)?.route);
  const deps: PipelineDeps = { ...before, config: compiled };
  const forPipelines = withoutRoutes(deps);
  const entries = yield* mapEach(
    compiled.routes,
    (route, i) => keptEntry(config.routes[i]!) ?? { route, run: buildPipeline(route, forPipelines) },
  );
  // Routes that take the same requests (a backend, a header, a limit changed): the served table,
  // its entries given the new routes at the swap. Otherwise a new one.
  const retarget = retargetTable(table, entries);
  return retarget === undefined ? { deps, table: yield* routeTableWork(entries) } : { deps, table, retarget };
}

/**
 * Runs `work` in slices while the running configuration serves, then `swap`s the result in. The
 * pools the new pipelines replace (a changed upstream TLS) stay open until the swap: the running
 * pipelines still call them. A throw while building leaves the running configuration in place.
 */
export async function buildInSlices(
  upstreams: UpstreamRegistry,
  work: Work<BuiltConfig>,
  swap: (built: BuiltConfig) => void,
): Promise<void> {
  const release = upstreams.holdRetired();
  try {
    swap(await runInSlices(work));
  } finally {
    release();
  }
}
