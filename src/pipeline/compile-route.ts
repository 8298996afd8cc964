/**
 * Compiles what each feature needs from a route's data, once per configuration, when its pipeline
 * is built: URL builders (upstream/), the claim check (auth/), the body validator (layers/),
 * header edits (upstream/), field filters and batch plans (mapping/). config/ hands over data
 * only; this is where the behaviour is made, so the request path only calls it.
 */
import type { CompiledConfig, RouteSpec } from '../config/types.js';
import type { CompiledRoute, PipelineConfig } from './types.js';
import { compileRestUrlBuilder, compileUrlBuilder } from '../upstream/target-url.js';
import { compileHeaderEdit } from '../upstream/headers/header-edits.js';
import { compileRequirements } from '../auth/requirements.js';
import { compileBodySchema } from '../layers/json-schema.js';
import { compileFieldFilter } from '../mapping/field-filter.js';
import { compileBatch } from '../mapping/batch.js';
import { clientRefusal, type ClientRefusal } from '../layers/ip-rules.js';
import { createClientIpResolver } from '../server/client-ip.js';
import { mapEach, runWhole, type Work } from '../config/sliced-work.js';

/** The configuration with every route compiled; its other parts are shared, not copied. */
export function compileRoutes(config: CompiledConfig): PipelineConfig {
  return runWhole(compileRoutesWork(config));
}

/**
 * `compileRoutes` as interruptible work (config/sliced-work.ts), after each route: a reload runs it
 * in slices. `kept` gives a route compiled before, for a route the reload did not change.
 */
export function* compileRoutesWork(
  config: CompiledConfig,
  kept: (spec: RouteSpec) => CompiledRoute | undefined = () => undefined,
): Work<PipelineConfig> {
  const rolesClaim = config.settings.auth.rolesClaim;
  const refusal = ipRulesCompiler(config);
  const routes = yield* mapEach(config.routes, (r) => kept(r) ?? compileRoute(r, rolesClaim, refusal));
  return Object.freeze({ ...config, routes: Object.freeze(routes) });
}

/**
 * Compiles `ipRules` against the client address of `trustProxy`, once per rules object: every
 * route that takes `config.ipRules` shares one test.
 */
function ipRulesCompiler(config: CompiledConfig): (spec: RouteSpec) => ClientRefusal | undefined {
  const compiled = new Map<object, ClientRefusal>();
  let clientAddress: ReturnType<typeof createClientIpResolver> | undefined;
  return ({ ipRules }) => {
    if (ipRules === undefined) return undefined;
    let refusal = compiled.get(ipRules);
    if (refusal === undefined) {
      clientAddress ??= createClientIpResolver(config.settings.trustProxy);
      refusal = clientRefusal(ipRules, clientAddress);
      compiled.set(ipRules, refusal);
    }
    return refusal;
  };
}

/** One route's data and the behaviour each feature compiled from it. */
export function compileRoute(
  spec: RouteSpec,
  rolesClaim: string | undefined,
  refusal: (spec: RouteSpec) => ClientRefusal | undefined = () => undefined,
): CompiledRoute {
  return Object.freeze({
    ...spec,
    buildPath: spec.isPrefix ? compileRestUrlBuilder(spec.path) : compileUrlBuilder(spec.path),
    refusesClient: refusal(spec),
    backends: Object.freeze(
      spec.backends.map((b) =>
        Object.freeze({ ...b, buildPath: compileUrlBuilder(b.path), filter: compileFieldFilter(b.fields) }),
      ),
    ),
    checkClaims: spec.require === undefined ? undefined : compileRequirements(spec.require, rolesClaim),
    mapping: Object.freeze(
      spec.mapping.map((m) => ({
        ...m,
        buildPath: compileUrlBuilder(m.path),
        batch: m.batch === undefined ? undefined : compileBatch(m.batch),
      })),
    ),
    validateBody: spec.requestSchema === undefined ? undefined : compileBodySchema(spec.requestSchema),
    filterResponse: compileFieldFilter(spec.fields),
    editHeaders: Object.freeze({
      request: compileHeaderEdit(spec.headers.request),
      response: compileHeaderEdit(spec.headers.response),
    }),
  });
}
