/**
 * The layers of a route's plugins (layers/plugin.ts), one per stage some of them implement, made
 * once when the route's pipeline is built; a route without plugins gets none (pipeline/build.ts).
 */
import type { Layer, CompiledRoute } from './types.js';
import type { CompiledConfig, RouteKind } from '../config/types.js';
import type { Upstream } from '../upstream/types.js';
import type { UpstreamRegistry } from '../upstream/upstream.js';
import type { TargetChoice } from '../plugins/context.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import type { LoadedPlugin, LoadedPlugins } from '../plugins/types.js';
import { pluginHooksLayer, pluginStageLayer, responseBodyRunner, type PluginLayerDeps } from '../layers/plugin.js';
import type { RunBodyPlugins } from '../endpoints/json-transform.js';
import { createClientIpResolver } from '../server/client-ip.js';
import { routeDropSet, type RequestDropSet } from '../upstream/trust-boundary.js';

export type { LoadedPlugins };

export interface RoutePlugins {
  readonly hooks: Layer | undefined;
  readonly onRequest: Layer | undefined;
  readonly onAuthenticated: Layer | undefined;
  readonly beforeUpstream: Layer | undefined;
  /** Some plugin of the route reads the request body (`capabilities.requestBody`). */
  readonly readsBody: boolean;
}

/** What the plugin layers of a configuration share (a PipelineDeps is one). */
export interface PluginLayerContext {
  readonly plugins: LoadedPlugins;
  readonly logger: Logger;
  readonly events: EventBus;
  /** The configuration's drop set; the route's is made from it. */
  readonly dropHeaders: RequestDropSet;
  /** The configuration, for its named upstreams (what `upstream.setTarget` may choose). */
  readonly config: Pick<CompiledConfig, 'upstreams'>;
  readonly upstreams: Pick<UpstreamRegistry, 'forOrigin'>;
}

/** Route kinds whose backend call goes through the standard backend call, and so may change target. */
const RETARGETABLE: ReadonlySet<RouteKind> = new Set(['standard', 'mapping', 'sse']);

/** What `upstream.setTarget` may choose on `route`: made once per route with beforeUpstream plugins. */
function targetChoice(route: CompiledRoute, context: PluginLayerContext): TargetChoice {
  if (!RETARGETABLE.has(route.kind))
    return {
      targets: new Map(),
      refusal: `upstream.setTarget: a ${route.kind} route's backend cannot be changed by a plugin (docs/plugins.md)`,
    };
  const targets = new Map<string, Upstream>();
  for (const [name, origin] of context.config.upstreams) targets.set(name, context.upstreams.forOrigin(origin));
  return { targets, refusal: undefined };
}

const NO_CHOICE: TargetChoice = { targets: new Map(), refusal: 'upstream.setTarget is only for beforeUpstream' };

/** The plugin layers of `route`; `trustProxy` gives the client address plugins see. */
export function routePlugins(
  route: CompiledRoute,
  context: PluginLayerContext,
  trustProxy: readonly string[],
): RoutePlugins {
  const plugins = resolvePlugins(route, context);
  const deps = layerDeps(route, context, trustProxy, plugins);
  const having = (stage: keyof LoadedPlugin['plugin']) => plugins.filter((p) => p.plugin[stage] !== undefined);
  const stage = (name: 'onRequest' | 'onAuthenticated' | 'beforeUpstream') => {
    const list = having(name);
    return list.length === 0 ? undefined : pluginStageLayer(name, list, deps);
  };
  const onResponse = having('onResponse');
  const onError = having('onError');
  return {
    hooks: onResponse.length + onError.length === 0 ? undefined : pluginHooksLayer(onResponse, onError, deps),
    onRequest: stage('onRequest'),
    onAuthenticated: stage('onAuthenticated'),
    beforeUpstream: stage('beforeUpstream'),
    readsBody: plugins.some((p) => p.plugin.capabilities?.requestBody === true),
  };
}

/** The route's plugins, in its order. */
function resolvePlugins(route: CompiledRoute, context: PluginLayerContext): LoadedPlugin[] {
  return route.plugins.map((name): LoadedPlugin => {
    const found = context.plugins.get(name);
    // Validation refuses a name the plugins: list does not declare; this is an embedding mistake.
    if (found === undefined)
      throw new Error(
        `route ${route.id} runs plugin "${name}", which is not loaded: pass loadPlugins(config)'s plugins`,
      );
    return found;
  });
}

function layerDeps(
  route: CompiledRoute,
  context: PluginLayerContext,
  trustProxy: readonly string[],
  plugins: readonly LoadedPlugin[],
): PluginLayerDeps {
  const clientIp = createClientIpResolver(trustProxy);
  return {
    logger: context.logger,
    events: context.events,
    clientIp: (ex) => clientIp(ex.req),
    dropHeaders: routeDropSet(context.dropHeaders, {
      kind: route.kind,
      allowUnderscores: route.headers.allowUnderscores,
    }),
    targets: plugins.some((p) => p.plugin.beforeUpstream !== undefined) ? targetChoice(route, context) : NO_CHOICE,
  };
}

/**
 * What the JSON-transform endpoint of `route` needs (endpoints/json-transform.ts), or undefined
 * when none of its plugins has `onResponseBody` with `capabilities.jsonResponse`: the route then
 * keeps its streaming endpoint. The limit is the smallest the plugins ask for (`defaultMaxBytes`
 * for a plugin that gives none).
 */
export function responseBodyPlugins(
  route: CompiledRoute,
  context: PluginLayerContext,
  trustProxy: readonly string[],
  defaultMaxBytes: number,
): { readonly maxBodyBytes: number; readonly runPlugins: RunBodyPlugins } | undefined {
  if (route.plugins.length === 0) return undefined;
  const plugins = resolvePlugins(route, context);
  const transforming = plugins.filter(
    (p) => p.plugin.onResponseBody !== undefined && p.plugin.capabilities?.jsonResponse,
  );
  if (transforming.length === 0) return undefined;
  const maxBodyBytes = Math.min(
    ...transforming.map((p) => {
      const asked = p.plugin.capabilities?.jsonResponse;
      return typeof asked === 'object' && asked.maxBytes !== undefined ? asked.maxBytes : defaultMaxBytes;
    }),
  );
  return { maxBodyBytes, runPlugins: responseBodyRunner(transforming, layerDeps(route, context, trustProxy, plugins)) };
}
