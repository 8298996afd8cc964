import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from './load.js';
import { formatProblem } from './problems.js';
import { sharedCacheSettings } from './schema.js';

const ROUTE = 'routes:\n  - { method: GET, route: /a, service: localhost:3000, path: /a, cache: true }\n';
const REDIS = '  redis: { url: "redis://127.0.0.1:6379" }\n';

function load(config: string) {
  return loadConfigText(`${ROUTE}config:\n${config}`, 'g.yaml', {});
}

describe('config.cache.redis', () => {
  it('is off by default; true or an object turns it on with a 1 MiB entry limit and the broadcast unless set', () => {
    const off = load('  cache: {}\n');
    assert.ok(off.ok);
    assert.equal(off.config.settings.cache.redis, false);
    assert.equal(sharedCacheSettings(off.config.settings.cache), undefined);
    for (const [value, expected] of [
      ['true', { maxEntryBytes: 1024 * 1024, broadcast: true }],
      ['{}', { maxEntryBytes: 1024 * 1024, broadcast: true }],
      ['{ maxEntryBytes: 4096 }', { maxEntryBytes: 4096, broadcast: true }],
      ['{ broadcast: false }', { maxEntryBytes: 1024 * 1024, broadcast: false }],
      ['{ enabled: false, maxEntryBytes: 4096 }', undefined],
    ] as const) {
      const r = load(`${REDIS}  cache: { redis: ${value} }\n`);
      assert.ok(r.ok, r.ok ? '' : r.problems.map(formatProblem).join('\n'));
      assert.deepEqual(sharedCacheSettings(r.config.settings.cache), expected, value);
    }
  });

  it('needs config.redis, and refuses bad values, each with its line and column', () => {
    const problems = (config: string) => {
      const r = load(config);
      return r.ok ? [] : r.problems.map(formatProblem);
    };
    assert.deepEqual(problems('  cache: { redis: true }\n'), [
      'g.yaml:4:19: config.cache.redis: the shared level needs config.redis (its url at least) (add config.redis: { url: redis://host:6379 }, or set cache.redis: false)',
    ]);
    assert.deepEqual(problems('  cache: { redis: { enabled: false } }\n'), [], 'off needs nothing');
    assert.deepEqual(problems(`${REDIS}  cache: { redis: { maxEntryBytes: 0, keyPrefix: "x" } }\n`), [
      'g.yaml:5:36: config.cache.redis.maxEntryBytes: must be at least 1',
      'g.yaml:5:39: config.cache.redis: unknown key "keyPrefix"',
    ]);
    assert.deepEqual(problems(`${REDIS}  cache: { redis: { broadcast: "yes" } }\n`), [
      'g.yaml:5:32: config.cache.redis.broadcast: expected a boolean, got the string "yes" (YAML 1.2 reads this as text: write true or false)',
    ]);
  });
});
