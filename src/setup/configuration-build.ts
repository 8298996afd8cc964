/**
 * What a configuration is served with, built beside the running one: its pipeline deps, every
 * route's pipeline, then the route table. Interruptible after each route (config/sliced-work.ts):
 * start-up runs it whole, a reload in slices of a few ms while the running configuration serves.
 */
import type { CompiledConfig } from '../config/types.js';
import { mapEach, runInSlices, type Work } from '../config/sliced-work.js';
import type { UpstreamRegistry } from '../upstream/upstream.js';
import { buildPipeline, type PipelineDeps, type SharedPipelineDeps } from '../pipeline/build.js';
import { createPipelineDepsWork } from '../pipeline/deps.js';
import { routeTableWork, type RouteTable } from '../router/route-table.js';

/** A configuration's pipelines and route table, ready to be swapped in. */
export interface BuiltConfig {
  readonly deps: PipelineDeps;
  readonly table: RouteTable;
}

export function* buildConfigWork(config: CompiledConfig, shared: SharedPipelineDeps): Work<BuiltConfig> {
  const deps = yield* createPipelineDepsWork(config, shared);
  const entries = yield* mapEach(deps.config.routes, (route) => ({ route, run: buildPipeline(route, deps) }));
  return { deps, table: yield* routeTableWork(entries) };
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
