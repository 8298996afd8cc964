import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from './load.js';
import { formatProblem } from './problems.js';

function problems(yaml: string): string[] {
  const r = loadConfigText(yaml, 'g.yaml', {});
  return r.ok ? [] : r.problems.map(formatProblem);
}

const route = (extra = '') => `routes:\n  - { method: GET, route: /a, service: localhost:3000, path: /a${extra} }\n`;

describe('rate-limit keys and quotas: defaults', () => {
  it('keys rate limits by ip, leaves quotas off, and quotas count by consumer once present', () => {
    const off = loadConfigText(route(), 'g.yaml', {});
    assert.ok(off.ok);
    assert.equal(off.config.settings.rateLimit.key, 'ip');
    assert.equal(off.config.settings.quotas, undefined);
    const on = loadConfigText(`${route()}config:\n  quotas: { day: 1000 }\n`, 'g.yaml', {});
    assert.ok(on.ok);
    assert.deepEqual(on.config.settings.quotas, { key: 'consumer', day: 1000, plans: {}, redisCommandTimeoutMs: 1000 });
  });

  it('accepts every key form, and a route quota with plans of its own', () => {
    const r = loadConfigText(
      `${route(', rateLimit: { key: "header:X-Tenant" }, quota: { key: claims.sub, plans: { pro: { month: 9 } } }')}` +
        'config:\n  rateLimit: { enabled: true, key: consumer }\n',
      'g.yaml',
      {},
    );
    assert.ok(r.ok, r.ok ? '' : r.problems.map(formatProblem).join('\n'));
    assert.equal(r.config.routes[0]!.rateLimit?.key, 'header:X-Tenant');
    assert.deepEqual(r.config.routes[0]!.quota, { enabled: true, key: 'claims.sub', plans: { pro: { month: 9 } } });
  });
});

describe('rate-limit keys and quotas: problems', () => {
  const table = [
    {
      name: 'an unknown key',
      yaml: `${route()}config:\n  rateLimit: { key: user }\n`,
      expect: ['g.yaml:4:21: config.rateLimit.key: must be ip, consumer, claims.NAME or header:NAME'],
    },
    {
      name: 'a header key that is not a header name',
      yaml: `${route(', rateLimit: { key: "header:X Tenant" }')}`,
      expect: ['g.yaml:2:84: routes[0].rateLimit.key: must be ip, consumer, claims.NAME or header:NAME'],
    },
    {
      name: 'quotas that limit nothing',
      yaml: `${route()}config:\n  quotas: { key: consumer }\n`,
      expect: ['g.yaml:4:11: config.quotas: limits nothing; give minute, hour, day or month, or plans'],
    },
    {
      name: 'a plan without a window, and a window that is not a whole number',
      yaml: `${route()}config:\n  quotas:\n    day: 1.5\n    plans:\n      free: {}\n`,
      expect: [
        'g.yaml:5:10: config.quotas.day: expected an integer, got number 1.5',
        'g.yaml:7:13: config.quotas.plans.free: limits nothing; give minute, hour, day or month',
      ],
    },
    {
      name: 'a route quota without numbers and no config.quotas',
      yaml: route(', quota: { key: consumer }'),
      expect: [
        'g.yaml:2:73: routes[0].quota: limits nothing; give minute, hour, day or month, or plans, or set config.quotas',
      ],
    },
    {
      name: 'a quota command timeout that is not a positive whole number of ms',
      yaml: `${route()}config:\n  quotas: { day: 5, redisCommandTimeoutMs: 0 }\n`,
      expect: ['g.yaml:4:44: config.quotas.redisCommandTimeoutMs: must be greater than 0'],
    },
    {
      name: 'quotas in redis without config.redis',
      yaml: `${route()}config:\n  quotas: { day: 5, store: redis }\n`,
      expect: [
        'g.yaml:4:28: config.quotas.store: redis needs config.redis (its url at least) (add config.redis: { url: redis://host:6379 }, or set store: local)',
      ],
    },
  ];
  for (const c of table) it(c.name, () => assert.deepEqual(problems(c.yaml), c.expect));
});
