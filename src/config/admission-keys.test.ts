import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from './load.js';
import { formatProblem } from './problems.js';

const route = (extra = '') => `routes:\n  - { method: GET, route: /a, service: localhost:3000, path: /a${extra} }\n`;

function problems(yaml: string): string[] {
  const r = loadConfigText(yaml, 'g.yaml', {});
  return r.ok ? [] : r.problems.map(formatProblem);
}

describe('admission keys', () => {
  it('are off by default, with a Retry-After of 1 s', () => {
    const r = loadConfigText(route(), 'g.yaml', {});
    assert.ok(r.ok);
    assert.deepEqual(r.config.settings.admission, { retryAfterSec: 1 });
    assert.equal(r.config.routes[0]!.maxInFlight, undefined);
  });

  it('read the gateway limit and a route limit', () => {
    const r = loadConfigText(
      `${route(', admission: { maxInFlight: 8 }')}config:\n  admission: { maxInFlight: 200, retryAfterSec: 3 }\n`,
      'g.yaml',
      {},
    );
    assert.ok(r.ok);
    assert.deepEqual(r.config.settings.admission, { maxInFlight: 200, retryAfterSec: 3 });
    assert.equal(r.config.routes[0]!.maxInFlight, 8);
  });

  const table = [
    {
      name: 'a gateway limit of 0',
      yaml: `${route()}config:\n  admission: { maxInFlight: 0 }\n`,
      expect: [/^g\.yaml:4:29: config\.admission\.maxInFlight: /],
    },
    {
      name: 'a fractional route limit',
      yaml: route(', admission: { maxInFlight: 2.5 }'),
      expect: [/^g\.yaml:2:92: routes\[0\]\.admission\.maxInFlight: /],
    },
    {
      name: 'a route admission without its limit',
      yaml: route(', admission: {}'),
      expect: [/^g\.yaml:2:\d+: routes\[0\]\.admission/],
    },
    {
      name: 'a misspelt key',
      yaml: `${route()}config:\n  admission: { maxInflight: 10 }\n`,
      expect: [/^g\.yaml:4:\d+: config\.admission: unknown key "maxInflight" \(did you mean "maxInFlight"\?\)/],
    },
    {
      name: 'a Retry-After of 0',
      yaml: `${route()}config:\n  admission: { maxInFlight: 10, retryAfterSec: 0 }\n`,
      expect: [/^g\.yaml:4:\d+: config\.admission\.retryAfterSec: /],
    },
  ];
  for (const c of table) {
    it(`reports ${c.name} at its place`, () => {
      const found = problems(c.yaml);
      assert.equal(found.length, c.expect.length, found.join('\n'));
      c.expect.forEach((re, i) => assert.match(found[i]!, re));
    });
  }
});
