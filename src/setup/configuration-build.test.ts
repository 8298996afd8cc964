/**
 * What a rebuild keeps from the served configuration (./configuration-build.ts): the deps and the
 * pipelines of the routes config/ kept, the table of an unchanged route list; nothing when the
 * settings or the routes' needs changed, or when there are plugins.
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
import { buildConfigWork, type ServedConfig } from './configuration-build.js';

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
    assert.equal(again.built.deps.authenticator, first.built.deps.authenticator);
    assert.equal(again.built.table.match('GET', '/api/b/7', undefined).kind, 'found');
  });

  it('builds a changed route anew, keeps the others, and makes a new table', () => {
    const first = load(yaml('/b/{id}'));
    const next = load(yaml('/b2/{id}'), first);
    const [a0, b0] = first.built.table.entries;
    const [a1, b1] = next.built.table.entries;
    assert.equal(a1, a0);
    assert.notEqual(b1, b0);
    assert.notEqual(next.built.table, first.built.table);
    assert.equal(next.built.deps.dropHeaders, first.built.deps.dropHeaders);
    const m = next.built.table.match('GET', '/api/b/7', undefined);
    assert.equal(m.kind === 'found' && m.entry, b1);
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
