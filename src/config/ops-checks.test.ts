import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from './load.js';
import { formatProblem } from './problems.js';

const ROUTE = 'routes:\n  - { method: GET, route: /a, service: localhost:3000, path: /a }\n';

function problems(yaml: string): string[] {
  const r = loadConfigText(yaml, 'g.yaml', {});
  return r.ok ? [] : r.problems.map(formatProblem);
}

describe('operations keys: defaults', () => {
  it('leaves CORS off, metrics on for loopback clients, propagation on, export off, and sets the client limits', () => {
    const r = loadConfigText(ROUTE, 'g.yaml', {});
    assert.ok(r.ok);
    const s = r.config.settings;
    assert.equal(s.cors, undefined);
    assert.deepEqual(s.telemetry, {
      metrics: true,
      metricsPublic: false,
      propagation: true,
      serviceName: 'portico',
      sampleRatio: 1,
    });
    assert.deepEqual(s.rateLimit, {
      enabled: false,
      requestsPerSec: 100,
      ipv6PrefixLength: 64,
      key: 'ip',
      store: 'local',
    });
    assert.equal(s.redis, undefined);
    assert.deepEqual(s.trustProxy, []);
    assert.equal(s.limits.maxBodyBytes, 10 * 1024 * 1024);
    assert.equal(s.limits.spillMaxBytes, 256 * 1024 * 1024);
    assert.equal(s.limits.spillMaxBytesPerClient, 32 * 1024 * 1024);
    assert.equal(s.limits.maxHeaderBytes, 16 * 1024);
    assert.equal(s.timeouts.clientHeaderSec, 30);
    assert.equal(s.timeouts.clientBodySec, 60);
    assert.equal(s.timeouts.keepAliveSec, 72);
    assert.equal(r.config.routes[0]!.maxBodyBytes, 10 * 1024 * 1024);
    assert.equal(r.config.routes[0]!.rateLimit, undefined);
  });

  it('fills CORS defaults once cors is present', () => {
    const r = loadConfigText(`${ROUTE}config:\n  cors:\n    origins: [https://app.example.com]\n`, 'g.yaml', {});
    assert.ok(r.ok);
    assert.deepEqual(r.config.settings.cors, {
      origins: ['https://app.example.com'],
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      headers: '*',
      exposedHeaders: ['X-Request-ID'],
      credentials: false,
      maxAgeSec: 600,
    });
  });

  it("takes a route's own body limit and rate limit", () => {
    const r = loadConfigText(
      'routes:\n  - method: POST\n    route: /u\n    service: x:1\n    path: /u\n    maxBodyBytes: 5\n    rateLimit: { requestsPerSec: 2 }\n',
      'g.yaml',
      {},
    );
    assert.ok(r.ok);
    assert.equal(r.config.routes[0]!.maxBodyBytes, 5);
    assert.deepEqual(r.config.routes[0]!.rateLimit, { enabled: true, requestsPerSec: 2 });
  });
});

describe('operations keys: problems', () => {
  const table = [
    {
      name: 'origins * with credentials',
      config: '  cors: { origins: "*", credentials: true }',
      expect: [
        'g.yaml:5:38: config.cors: origins "*" cannot be combined with credentials: true (browsers refuse it); list the allowed origins',
      ],
    },
    {
      name: 'an origin with a path',
      config: '  cors: { origins: [https://a.example.com/app] }',
      expect: [
        'g.yaml:5:21: config.cors.origins[0]: "https://a.example.com/app" is not an origin: write scheme://host[:port] with no path ("https://app.example.com", "https://*.example.com")',
      ],
    },
    {
      name: 'a bad trusted proxy',
      config: '  trustProxy: [10.0.0.0/8, proxy.local, 10.0.0.0/40]',
      expect: [
        'g.yaml:5:28: config.trustProxy[1]: "proxy.local" is not an IP address, a CIDR (10.0.0.0/8, fd00::/8) or one of loopback, private, linklocal',
        'g.yaml:5:41: config.trustProxy[2]: "10.0.0.0/40": prefix length must be 0-32',
      ],
    },
    {
      name: 'bad ipRules entries',
      config: '  ipRules: { allow: [10.0.0.0/33, 1.2.3], deny: ["2001:db8::/129", 192.0.2.1] }',
      expect: [
        'g.yaml:5:22: config.ipRules.allow[0]: "10.0.0.0/33": prefix length must be 0-32',
        'g.yaml:5:35: config.ipRules.allow[1]: "1.2.3" is not an IP address or a CIDR (10.0.0.0/8, 2001:db8::/32)',
        'g.yaml:5:50: config.ipRules.deny[0]: "2001:db8::/129": prefix length must be 0-128',
      ],
    },
    {
      name: 'a burst under 1',
      config: '  rateLimit: { enabled: true, burst: 0.5 }',
      expect: ['g.yaml:5:38: config.rateLimit.burst: must be at least 1, else no request is ever admitted'],
    },
    {
      name: 'an OTLP endpoint that is not a URL',
      config: '  telemetry: { otlpEndpoint: collector:4318 }',
      expect: [
        'g.yaml:5:30: config.telemetry.otlpEndpoint: "collector:4318" must be an http:// or https:// URL (OTLP/HTTP, e.g. http://otel-collector:4318)',
      ],
    },
    {
      name: 'metrics open to every client and behind a token at once',
      config: '  telemetry: { metricsPublic: true, metricsToken: a-metrics-token-of-some-length }',
      expect: [
        'g.yaml:5:31: config.telemetry.metricsPublic: true serves /metrics to any client, metricsToken to its bearers only; keep one',
      ],
    },
    {
      name: 'a sample ratio over 1',
      config: '  telemetry: { sampleRatio: 2 }',
      expect: ['g.yaml:5:29: config.telemetry.sampleRatio: must be at most 1'],
    },
    {
      name: 'a misspelt key',
      config: '  cors: { origins: "*", maxAgeSecs: 5 }',
      expect: ['g.yaml:5:25: config.cors: unknown key "maxAgeSecs" (did you mean "maxAgeSec"?)'],
    },
  ];
  for (const c of table) {
    it(c.name, () => assert.deepEqual(problems(`${ROUTE}\nconfig:\n${c.config}\n`), c.expect));
  }
});

describe('ipRules', () => {
  it("reports a route's bad entry at its line and column", () => {
    const yaml =
      'routes:\n  - method: GET\n    route: /a\n    service: localhost:3000\n    path: /a\n    ipRules:\n      deny: [192.0.2.0/24, 10.0.0.0/8x]\n';
    assert.deepEqual(problems(yaml), [
      'g.yaml:7:28: routes[0].ipRules.deny[1]: "10.0.0.0/8x": prefix length must be 0-32',
    ]);
  });

  it('gives each route its own ipRules, else config.ipRules (one object), else none', () => {
    const r = loadConfigText(
      `${ROUTE}  - { method: GET, route: /b, service: x:1, path: /b, ipRules: { allow: [10.0.0.0/8] } }\n` +
        '  - { method: GET, route: /c, service: x:1, path: /c }\n' +
        '  - { method: GET, route: /d, service: x:1, path: /d, ipRules: {} }\n' +
        'config:\n  ipRules: { deny: [192.0.2.1] }\n',
      'g.yaml',
      {},
    );
    assert.ok(r.ok);
    const [a, b, c, d] = r.config.routes;
    assert.deepEqual(a!.ipRules, { allow: [], deny: ['192.0.2.1'] });
    assert.deepEqual(b!.ipRules, { allow: ['10.0.0.0/8'], deny: [] });
    assert.equal(c!.ipRules, a!.ipRules);
    // An empty section replaces the global rules and refuses nobody: the route has no check.
    assert.equal(d!.ipRules, undefined);
  });

  it('leaves routes without rules when config.ipRules is absent', () => {
    const r = loadConfigText(ROUTE, 'g.yaml', {});
    assert.ok(r.ok);
    assert.equal(r.config.settings.ipRules, undefined);
    assert.equal(r.config.routes[0]!.ipRules, undefined);
  });
});
