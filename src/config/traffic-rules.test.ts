import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from './load.js';
import { formatProblem } from './problems.js';

function problems(yaml: string): string[] {
  const r = loadConfigText(yaml, 'g.yaml', {});
  return r.ok ? [] : r.problems.map(formatProblem);
}

/** A file with one route made of `lines` (indented as route keys) and an upstream named canary. */
const file = (lines: string) => `upstreams:
  canary:
    targets: [localhost:4000]
routes:
  - method: GET
    route: /a
    path: /a
${lines}`;

describe('split, stickyBy and mirror rules (docs/routing.md)', () => {
  it('compiles a split of a service and an upstream, with its sticky key, and a mirror with its defaults', () => {
    const r = loadConfigText(
      file(`    stickyBy: header:X-User
    split:
      - { service: localhost:3000, weight: 90 }
      - { upstream: canary, weight: 10 }
    mirror: { service: localhost:5000 }
`),
      'g.yaml',
      {},
    );
    assert.ok(r.ok, r.ok ? '' : r.problems.map(formatProblem).join('\n'));
    const route = r.config.routes[0]!;
    assert.deepEqual(
      route.split?.arms.map((a) => [a.name, a.origin.key, a.weight]),
      [
        ['localhost:3000', 'http://localhost:3000', 90],
        ['canary', 'canary', 10],
      ],
    );
    assert.deepEqual(route.split?.stickyBy, { from: 'header', name: 'x-user' });
    assert.equal(route.service, 'localhost:3000');
    assert.deepEqual(route.mirror, {
      service: 'localhost:5000',
      origin: route.mirror!.origin,
      percent: 100,
      maxBodyBytes: 65536,
      maxInFlight: 64,
      timeoutMs: 5000,
    });
  });

  const cases: { name: string; lines: string; expect: string[] }[] = [
    {
      name: 'service and split together',
      lines: `    service: localhost:3000
    split:
      - { service: localhost:3001, weight: 1 }
      - { service: localhost:3002, weight: 1 }
`,
      expect: ['g.yaml:8:14: routes[0]: a route has service or split, not both'],
    },
    {
      name: 'an arm with both service and upstream, a misspelt upstream, an arm twice, every weight 0',
      lines: `    split:
      - { service: localhost:3001, upstream: canary, weight: 0 }
      - { upstream: canry, weight: 0 }
      - { service: localhost:3001, weight: 0 }
      - { service: http://localhost:3001, weight: 0 }
`,
      expect: [
        'g.yaml:9:7: routes[0].split: every weight is 0; no arm would get a request',
        'g.yaml:9:9: routes[0].split[0]: an arm names exactly one of service or upstream',
        'g.yaml:10:21: routes[0].split[1].upstream: no upstream is named "canry" (did you mean "canary"?)',
        'g.yaml:12:9: routes[0].split[3]: http://localhost:3001 is also split[2]; list each backend once',
      ],
    },
    {
      name: 'a bad sticky key, and one without a split',
      lines: `    service: localhost:3000
    stickyBy: query:user
`,
      expect: [
        'g.yaml:9:15: routes[0].stickyBy: sticks clients to an arm of a split; this route has no split',
        'g.yaml:9:15: routes[0].stickyBy: "query:user" must be header:NAME, cookie:NAME or claims.NAME',
      ],
    },
    {
      name: 'a split on a WebSocket route',
      lines: `    isWebSocket: true
    split:
      - { service: localhost:3001, weight: 1 }
      - { service: localhost:3002, weight: 1 }
`,
      expect: ['g.yaml:10:7: routes[0].split: a WebSocket route cannot split'],
    },
    {
      name: 'a mirror on an SSE route, a mirror naming an upstream, a bad percent',
      lines: `    service: localhost:3000
    isSSE: true
    mirror: { service: canary, percent: 150 }
`,
      expect: [
        'g.yaml:10:13: routes[0].mirror: a streaming route (isSSE or isWebSocket) cannot be mirrored',
        'g.yaml:10:24: routes[0].mirror.service: "canary" is a named upstream',
        'g.yaml:10:41: routes[0].mirror.percent',
      ],
    },
    {
      name: 'a mirror on an aggregated route',
      lines: `    backends:
      - { service: localhost:3001, path: /a }
    mirror: { service: localhost:5000 }
`,
      expect: [
        'g.yaml:7:11: routes[0].path: an aggregated route has backends instead',
        'g.yaml:10:13: routes[0].mirror: an aggregated route cannot be mirrored',
      ],
    },
  ];
  for (const c of cases)
    it(`reports ${c.name} at its line`, () => {
      const got = problems(file(c.lines));
      for (const e of c.expect)
        assert.ok(
          got.some((p) => p.startsWith(e)),
          `missing ${e}\ngot:\n${got.join('\n')}`,
        );
      assert.equal(got.length, c.expect.length, got.join('\n'));
    });
});
