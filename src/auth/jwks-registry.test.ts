import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../observability/logger.js';
import { createJwksRegistry, JWKS_REGISTRY_MAX_SOURCES } from './jwks-registry.js';
import type { JwksKeySource } from './jwks.js';

function setup() {
  const made: string[] = [];
  const registry = createJwksRegistry({
    logger: createLogger({ level: 'silent' }),
    createSource: ({ url, cooldownSec }): JwksKeySource => {
      made.push(`${cooldownSec} ${url}`);
      return {
        getKey: async () => {
          throw new Error('unused');
        },
        prefetch: async () => {},
        version: () => 0,
      };
    },
  });
  return { registry, made };
}

describe('JWKS registry', () => {
  it('one source per URL and cooldown, shared by every later request for it', () => {
    const { registry, made } = setup();
    const a = registry.keySource({ url: 'http://a/jwks', cooldownSec: 30 });
    assert.equal(registry.keySource({ url: 'http://a/jwks', cooldownSec: 30 }), a);
    assert.notEqual(registry.keySource({ url: 'http://a/jwks', cooldownSec: 0 }), a);
    assert.notEqual(registry.keySource({ url: 'http://b/jwks', cooldownSec: 30 }), a);
    assert.deepEqual(made, ['30 http://a/jwks', '0 http://a/jwks', '30 http://b/jwks']);
    assert.equal(registry.size, 3);
  });

  it(`keeps at most ${JWKS_REGISTRY_MAX_SOURCES} sources, dropping the least recently used`, () => {
    const { registry, made } = setup();
    const first = registry.keySource({ url: 'http://u0/jwks', cooldownSec: 30 });
    for (let i = 1; i < JWKS_REGISTRY_MAX_SOURCES; i++)
      registry.keySource({ url: `http://u${i}/jwks`, cooldownSec: 30 });
    // u0 used again: u1 is now the oldest.
    assert.equal(registry.keySource({ url: 'http://u0/jwks', cooldownSec: 30 }), first);
    registry.keySource({ url: 'http://new/jwks', cooldownSec: 30 });
    assert.equal(registry.size, JWKS_REGISTRY_MAX_SOURCES);
    assert.equal(registry.keySource({ url: 'http://u0/jwks', cooldownSec: 30 }), first);
    const before = made.length;
    registry.keySource({ url: 'http://u1/jwks', cooldownSec: 30 });
    assert.equal(made.length, before + 1, 'u1 was evicted and is made again');
  });
});
