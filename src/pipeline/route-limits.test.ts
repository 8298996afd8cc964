import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CompiledRoute } from './types.js';
import { loadConfigText } from '../config/load.js';
import { routeLimitLayers, type LimitDeps } from './route-limits.js';
import { createRateLimiter } from '../layers/rate-limit.js';
import { createQuotaCounters } from '../layers/quota.js';
import { createWindowClock } from '../layers/quota-windows.js';
import { createAdmissionCounts } from '../layers/admission-counts.js';

/** The limit layers of the one route of `routeLine`, with `config` lines: how many go before and after auth. */
function placement(routeLine: string, config = ''): [before: number, after: number] {
  const loaded = loadConfigText(
    `routes:\n  - { method: GET, route: /a, service: localhost:3000, path: /a${routeLine} }\nconfig:\n  auth: { secret: a-secret-of-at-least-thirty-two-bytes }\n${config}`,
    'g.yaml',
    {},
  );
  assert.ok(loaded.ok);
  const deps: LimitDeps = {
    config: loaded.config,
    rateLimitStore: createRateLimiter(),
    quotaStore: createQuotaCounters(),
    quotaWindows: createWindowClock(),
    clientIp: () => '10.0.0.7',
    admission: createAdmissionCounts(),
  };
  const { beforeAuth, afterAuth } = routeLimitLayers(loaded.config.routes[0] as CompiledRoute, deps);
  return [beforeAuth.length, afterAuth.length];
}

describe('where limits go around auth', () => {
  it('none for a route without limits: no layer, no cost', () => assert.deepEqual(placement(''), [0, 0]));

  it('by address or header: before auth', () => {
    assert.deepEqual(placement(', protected: true, rateLimit: { requestsPerSec: 1 }'), [1, 0]);
    assert.deepEqual(placement(', protected: true, quota: { key: "header:X-Client", day: 5 }'), [1, 0]);
  });

  it('by consumer or claim on a route with auth: after it', () => {
    assert.deepEqual(placement(', protected: true, rateLimit: { requestsPerSec: 1, key: consumer }'), [0, 1]);
    assert.deepEqual(placement(', protected: true', '  quotas: { key: claims.sub, day: 5 }\n'), [0, 1]);
    assert.deepEqual(
      placement(', protected: true, rateLimit: { requestsPerSec: 1 }', '  quotas: { day: 5 }\n'),
      [1, 1],
      'an address rate limit before, a consumer quota after',
    );
  });

  it('admission control: one layer before auth, for a route limit, the gateway limit or both', () => {
    assert.deepEqual(placement(', protected: true, admission: { maxInFlight: 4 }'), [1, 0]);
    assert.deepEqual(placement(', protected: true', '  admission: { maxInFlight: 100 }\n'), [1, 0]);
    assert.deepEqual(
      placement(
        ', protected: true, admission: { maxInFlight: 4 }, rateLimit: { requestsPerSec: 1, key: consumer }',
        '  admission: { maxInFlight: 100 }\n',
      ),
      [1, 1],
    );
  });

  it('by consumer on a route without auth: before, where it counts by address', () => {
    assert.deepEqual(placement('', '  quotas: { day: 5 }\n'), [1, 0]);
  });
});
