/**
 * Pipelines of a configuration for unit tests of pipeline/build.ts, with no network: real
 * upstream pools that never connect, a breaker that admits (or not) and records what it is asked,
 * and an Authenticator that answers one outcome and counts its calls. Close the pools with
 * `closePipelineSetups` in an `after` hook.
 */
import type { CompiledConfig } from '../../src/config/types.js';
import { loadConfigText } from '../../src/config/load.js';
import type { Authenticator, AuthOutcome } from '../../src/auth/types.js';
import type { CircuitBreaker } from '../../src/circuit/types.js';
import { createUpstreamRegistry, type UpstreamRegistry } from '../../src/upstream/upstream.js';
import { createMappingCache } from '../../src/mapping/cache.js';
import { createEventBus, type GatewayEvents } from '../../src/observability/events.js';
import { createLogger } from '../../src/observability/logger.js';
import { createPipelineDeps, routeLayers, type PipelineDeps } from '../../src/pipeline/build.js';
import type { CompiledRoute, Exchange } from '../../src/pipeline/types.js';
import { compose } from '../../src/pipeline/compose.js';

export const SECRET = 'a-unit-test-secret-of-at-least-32-bytes';
export const BROWSER = 'https://app.example.com';
export const BREAKER = 'circuitBreaker: { enabled: true }';
/** The `config:` line that makes every route not marked public require a token signed with SECRET. */
export const PROTECTED = `auth: { secret: "${SECRET}", defaultProtected: true }`;

/** A configuration of one route (a YAML flow mapping) and the given `config:` lines. */
export function oneRoute(route: string, ...config: string[]): string {
  return `routes:\n  - ${route}\nconfig:\n${config.map((line) => `  ${line}\n`).join('')}`;
}

/** An auth refusal as an Authenticator answers it: 401 with its own headers and body. */
export const REFUSAL: AuthOutcome = {
  ok: false,
  status: 401,
  headers: { 'content-type': 'application/json', 'content-length': '2', 'www-authenticate': 'Bearer' },
  body: Buffer.from('{}'),
  code: 'GW_AUTH_MISSING',
};

function compile(yaml: string): CompiledConfig {
  const r = loadConfigText(yaml, 'unit.yaml', {});
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.config;
}

/** A breaker that admits (or not) and records every acquire and outcome. */
function recordingBreaker(admit = true) {
  const log: string[] = [];
  const breaker: CircuitBreaker = {
    origin: 'http://127.0.0.1:1',
    state: admit ? 'closed' : 'open',
    acquire() {
      log.push('acquire');
      if (!admit) return undefined;
      return { succeed: () => log.push('succeed'), fail: () => log.push('fail'), release: () => log.push('release') };
    },
    retryAfterSec: () => 12.2,
  };
  return { breaker, log };
}

/** An Authenticator that answers `outcome` and counts its calls. */
function fakeAuthenticator(outcome: AuthOutcome = { ok: true, claimHeaders: [['X-sub', 'u1']] }) {
  const calls: string[] = [];
  const authenticator: Authenticator = {
    authenticate: async (_req, requestId) => (calls.push(requestId), outcome),
  };
  return { authenticator, calls };
}

const registries: UpstreamRegistry[] = [];

/** Closes the pools every `setup` made. */
export function closePipelineSetups(): Promise<void[]> {
  return Promise.all(registries.splice(0).map((r) => r.close()));
}

/** The pipeline deps of `yaml`, its compiled routes, and what the breaker and the Authenticator saw. */
export function setup(yaml: string, options: { admit?: boolean; auth?: AuthOutcome } = {}) {
  const config = compile(yaml);
  const { breaker, log } = recordingBreaker(options.admit);
  // Real pools are made but never connected: no endpoint runs in these tests.
  const upstreams = createUpstreamRegistry({ connections: 1, createBreaker: () => breaker });
  registries.push(upstreams);
  const events = createEventBus();
  const authResults: GatewayEvents['auth:result'][] = [];
  events.on('auth:result', (e) => authResults.push(e));
  const { authenticator, calls } = fakeAuthenticator(options.auth);
  const deps: PipelineDeps = {
    ...createPipelineDeps(config, {
      upstreams,
      events,
      logger: createLogger({ level: 'silent' }),
      mappingCache: createMappingCache(config.settings.mappingCache),
    }),
    authenticator,
  };
  return { deps, route: (i = 0) => deps.config.routes[i]!, breakerLog: log, authCalls: calls, authResults };
}

/** The recipe of `route` around a fake `next`. */
export const httpPipeline = (route: CompiledRoute, deps: PipelineDeps, next: (ex: Exchange) => Promise<void>) =>
  compose(routeLayers(route, deps), next);
