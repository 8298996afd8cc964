/**
 * One recipe per route, decided at config load: a route that needs no token has no auth layer,
 * a route without mapping has no enrichment code in its path.
 */
import type { CompiledConfig, CompiledRoute } from '../config/compile.js';
import type { UpstreamRegistry } from '../upstream/upstream.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import { compose, type Layer, type Step } from './step.js';
import { forwardEndpoint } from '../proxy/forward.js';
import { requestDropSet } from '../upstream/forward-headers.js';
import { sendError } from '../response/send-error.js';

/** What every pipeline may use; made once per process (registries) or per config (the rest). */
export interface PipelineDeps {
  readonly config: CompiledConfig;
  readonly upstreams: UpstreamRegistry;
  readonly events: EventBus;
  readonly logger: Logger;
  /** Client headers never forwarded (hop-by-hop, gateway-owned, auth.stripHeaders). */
  readonly dropHeaders: ReadonlySet<string>;
}

export function createPipelineDeps(config: CompiledConfig, shared: Omit<PipelineDeps, 'config' | 'dropHeaders'>): PipelineDeps {
  return { ...shared, config, dropHeaders: requestDropSet(config.settings.auth.stripHeaders) };
}

export function buildPipeline(route: CompiledRoute, deps: PipelineDeps): Step {
  const layers: Layer[] = [];
  return compose(layers, endpointFor(route, deps));
}

function endpointFor(route: CompiledRoute, deps: PipelineDeps): Step {
  const upstream = deps.upstreams.forOrigin(route.origin);
  const timeouts = deps.config.settings.timeouts;
  const forwardOptions = {
    upstream,
    dropHeaders: deps.dropHeaders,
    headersTimeoutMs: timeouts.backendSec * 1000,
    bodyTimeoutMs: timeouts.backendSec * 1000,
    events: deps.events,
  };
  switch (route.kind) {
    case 'websocket':
      // A plain request on a WebSocket route; upgrades never reach the pipeline (DECISIONS.md).
      return async (ex) => {
        ex.errorCode = 'GW_UPGRADE_REQUIRED';
        sendError(ex.res, 'GW_UPGRADE_REQUIRED', { upgrade: 'websocket', connection: 'Upgrade' });
      };
    case 'sse':
      return forwardEndpoint(route, { ...forwardOptions, bodyTimeoutMs: 0 });
    case 'mapping':
    case 'standard':
      return forwardEndpoint(route, forwardOptions);
  }
}
