/**
 * What a rebuild keeps from the served configuration (./configuration-build.ts): the deps and the
 * pipelines of the routes config/ kept, the table while the routes take the same requests (given
 * the changed routes at the swap); nothing when the settings or the routes' needs changed.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfigText } from '../config/parse.js';
import { validateConfig } from '../config/validate.js';
import { compileConfig } from '../config/compile.js';
import type { CompiledConfig } from '../config/types.js';
import { runWhole } from '../config/sliced-work.js';
import { createUpstreamRegistry } from '../upstream/upstream.js';
import { createMappingCache } from '../mapping/cache.js';
import { createEventBus } from '../observability/events.js';
import { createLogger } from '../observability/logger.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { buildConfigWork, type ServedConfig } from './configuration-build.js';

/** A full collection, without node's --expose-gc flag. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const upstreams = createUpstreamRegistry({ connections: 1 });
const shared = {
  upstreams,
  events: createEventBus(),
  logger: createLogger({ level: 'silent' }),
  mappingCache: createMappingCache({ enabled: false, ttlSec: 1, maxSize: 1, store: 'local' }),
};

const yaml = (bPath: string, settings = '', bAuth = 'public: true') => `
routes:
  - { method: GET, route: /a, service: "127.0.0.1:9", path: /a, public: true }
  - { method: GET, route: "/b/{id}", service: "127.0.0.1:9", path: "${bPath}", ${bAuth} }
config:
  auth: { secret: "a-unit-test-secret-of-at-least-32-bytes" }
${settings}`;

/** Compiles `text` keeping what `served` compiled (as a reload does), and builds it on `served`. */
function load(text: string, served?: ServedConfig): ServedConfig {
  const v = validateConfig(parseConfigText(text, '/etc/portico/gateway.yaml', {}));
  if (!v.ok) throw new Error(JSON.stringify(v.problems));
  const config: CompiledConfig = compileConfig(v.config, '/etc/portico/gateway.yaml', { previous: served?.config });
  return { config, built: runWhole(buildConfigWork(config, shared, served)) };
}

describe('a rebuild on the served configuration', () => {
  after(() => upstreams.close());

  it('keeps the deps, every pipeline and the table when nothing changed', () => {
    const first = load(yaml('/b/{id}'));
    const again = load(yaml('/b/{id}'), first);
    assert.equal(again.built.table, first.built.table);
    assert.deepEqual(again.built.table.entries, first.built.table.entries);
    assert.equal(again.built.deps.authenticator, first.built.deps.authenticator);
    assert.equal(again.built.table.match('GET', '/api/b/7', undefined).kind, 'found');
  });

  it('builds a changed route anew, keeps the others, and gives the served table its route at the swap', () => {
    const first = load(yaml('/b/{id}'));
    const [a0, b0] = first.built.table.entries;
    const servedRoute = b0!.route;
    const next = load(yaml('/b2/{id}'), first);
    assert.equal(next.built.table, first.built.table);
    assert.equal(next.built.deps.dropHeaders, first.built.deps.dropHeaders);
    const matched = () => {
      const m = next.built.table.match('GET', '/api/b/7', undefined);
      return m.kind === 'found' ? m.entry.route : undefined;
    };
    // Until the swap, the served table serves the served route.
    assert.equal(matched(), servedRoute);
    next.built.retarget!();
    assert.notEqual(matched(), servedRoute);
    assert.equal(matched(), next.built.deps.config.routes[1]);
    assert.equal(next.built.table.entries[0], a0);
    assert.equal(next.built.table.entries[0]!.route, first.built.deps.config.routes[0]);
  });

  it('builds a new table when a route takes other requests', () => {
    const first = load(yaml('/b/{id}'));
    const next = load(yaml('/b/{id}').replace('route: "/b/{id}"', 'route: "/c/{id}"'), first);
    assert.notEqual(next.built.table, first.built.table);
    assert.equal(next.built.retarget, undefined);
    assert.equal(next.built.table.entries[0], first.built.table.entries[0]);
    assert.equal(next.built.table.match('GET', '/api/b/7', undefined).kind, 'not-found');
    assert.equal(next.built.table.match('GET', '/api/c/7', undefined).kind, 'found');
  });

  it('lets a kept pipeline keep no route list of the load that built it', async () => {
    // A split route's pipeline holds its deps (its arms are built on them) and is kept by every
    // reload below, which edits another route; the route list of the load that built it must go.
    const split = (aPath: string) =>
      yaml('/b/{id}').replace(
        'routes:\n',
        `routes:\n  - { method: GET, route: /s, path: /s, public: true, split: [{ service: "127.0.0.1:9", weight: 1 }, { service: "127.0.0.1:8", weight: 1 }] }\n  - { method: GET, route: /x, service: "127.0.0.1:9", path: ${aPath}, public: true }\n`,
      );
    let served = load(split('/x0'));
    const built = new WeakRef(served.built.deps.config.routes);
    for (let i = 1; i <= 3; i++) served = load(split(`/x${i}`), served);
    assert.equal(served.built.table.entries[0]!.route.split?.arms.length, 2);
    // A WeakRef's target lives until the job that made it ends.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    assert.equal(built.deref(), undefined, 'the route list of the first load is still reachable');
  });

  it('builds everything anew when the settings changed', () => {
    const first = load(yaml('/b/{id}'));
    const next = load(yaml('/b/{id}', '  timeouts: { backendSec: 9 }'), first);
    assert.notEqual(next.built.table.entries[0], first.built.table.entries[0]);
    assert.notEqual(next.built.deps.dropHeaders, first.built.deps.dropHeaders);
  });

  it('builds everything anew when the routes need another part of the deps (a token check)', () => {
    const first = load(yaml('/b/{id}'));
    assert.equal(first.built.deps.authenticator, undefined);
    const next = load(yaml('/b/{id}', '', 'protected: true'), first);
    assert.notEqual(next.built.deps.authenticator, undefined);
    assert.notEqual(next.built.table.entries[0], first.built.table.entries[0]);
  });
});
