import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from './compile.js';
import { formatProblem } from './problems.js';

function problems(yaml: string, env: NodeJS.ProcessEnv = {}): string[] {
  const r = loadConfigText(yaml, 'g.yaml', env);
  return r.ok ? [] : r.problems.map(formatProblem);
}

const ROUTE = `  - method: GET
    route: /a
    service: localhost:3000
    path: /a
`;

describe('config defaults (spec 2.3-2.5, DECISIONS.md)', () => {
  it('applies every default', () => {
    const r = loadConfigText(`routes:\n${ROUTE}`, 'g.yaml', {});
    assert.ok(r.ok);
    const { settings, routes, prefix } = r.config;
    assert.equal(prefix, '/api');
    assert.deepEqual(settings.circuitBreaker, { enabled: false, maxFailures: 5, timeoutSec: 30, halfOpenRequests: 1 });
    assert.deepEqual(settings.mappingCache, { enabled: false, ttlSec: 60, maxSize: 1000 });
    assert.equal(settings.auth.authPath, '/auth/validate');
    assert.equal(settings.auth.defaultProtected, false);
    assert.deepEqual(settings.auth.stripHeaders, ['X-userId', 'X-username', 'X-role', 'X-sub', 'X-email']);
    assert.equal(settings.timeouts.backendSec, 30);
    assert.equal(settings.timeouts.mappingSec, 10);
    assert.equal(settings.limits.maxMappingBodyBytes, 10 * 1024 * 1024);
    assert.equal(settings.port, 8080);
    assert.equal(settings.host, '0.0.0.0');
    assert.equal(routes[0]!.kind, 'standard');
    assert.equal(routes[0]!.requiresAuth, false);
    assert.equal(routes[0]!.clientPath, '/api/a');
  });

  it('compiles to a frozen configuration', () => {
    const r = loadConfigText(`routes:\n${ROUTE}`, 'g.yaml', {});
    assert.ok(r.ok);
    assert.ok(Object.isFrozen(r.config) && Object.isFrozen(r.config.routes) && Object.isFrozen(r.config.routes[0]));
    assert.throws(() => ((r.config.routes as unknown as unknown[]).length = 0), TypeError);
  });

  it('protects routes with defaultProtected unless public', () => {
    const r = loadConfigText(`routes:\n${ROUTE}  - { method: GET, route: /b, service: x, path: /b, public: true }\nconfig: { auth: { secret: s, defaultProtected: true } }`, 'g.yaml', {});
    assert.ok(r.ok);
    assert.deepEqual(r.config.routes.map((x) => x.requiresAuth), [true, false]);
  });

  it('an empty basePath or "/" means no prefix', () => {
    for (const basePath of ['""', '/']) {
      const r = loadConfigText(`routes:\n${ROUTE}config: { basePath: ${basePath} }`, 'g.yaml', {});
      assert.ok(r.ok);
      assert.equal(r.config.routes[0]!.clientPath, '/a');
    }
  });
});

describe('environment substitution', () => {
  it('replaces ${NAME} and ${NAME:-default}; a plain scalar is re-read as YAML', () => {
    const yaml = ['routes:', '  - method: GET', '    route: /a', '    service: ${SVC}', '    path: /a', 'config:', '  port: ${P:-9000}', '  host: ${H:-127.0.0.1}', '  auth:', '    secret: "pre-${S}-$$"'].join('\n');
    const r = loadConfigText(yaml, 'g.yaml', { SVC: 'users:1', S: 'x' });
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.config.routes[0]!.origin.key, 'http://users:1');
    assert.equal(r.config.settings.port, 9000);
    assert.equal(r.config.settings.host, '127.0.0.1');
    assert.equal(r.config.settings.auth.secret, 'pre-x-$');
  });
  it('keeps substituted text exactly: comments, quotes and digits in a secret survive', () => {
    for (const secret of ['abc #def-super-secret', "'quoted'", '123456', 'true', 'a: b']) {
      const r = loadConfigText('routes: []\nconfig:\n  auth:\n    secret: ${S}', 'g.yaml', { S: secret });
      assert.ok(r.ok, `${secret}: ${JSON.stringify(r)}`);
      assert.equal(r.config.settings.auth.secret, secret);
    }
  });
  it('a whole-value substitution is a number or boolean only when strictly one', () => {
    const r = loadConfigText('routes: []\nconfig:\n  port: ${P}\n  circuitBreaker:\n    enabled: ${E}\n  host: h${P}', 'g.yaml', { P: '9000', E: 'true' });
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.config.settings.port, 9000);
    assert.equal(r.config.settings.circuitBreaker.enabled, true);
    assert.equal(r.config.settings.host, 'h9000');
    assert.deepEqual(problems('routes: []\nconfig:\n  port: ${P}', { P: '80 # x' }), ['g.yaml:3:9: config.port: expected a number, got the string "80 # x"']);
  });
  it('an empty variable takes the default', () => {
    const r = loadConfigText('routes: []\nconfig:\n  host: ${H:-h}', 'g.yaml', { H: '' });
    assert.ok(r.ok);
    assert.equal(r.config.settings.host, 'h');
  });
  it('a missing variable is reported once, at its position', () => {
    assert.deepEqual(problems(`routes: []\nconfig:\n  host: \${NOPE}\n`), ['g.yaml:3:9: environment variable NOPE is not set (export NOPE=..., or write ${NOPE:-default} to give a default)']);
  });
});

describe('validation problems', () => {
  it('reports every problem at once, sorted by position', () => {
    const p = problems(`routes:\n  - method: FETCH\n    route: /a\n  - method: GET\n    route: /a\n    service: s\n    path: /a\n    mapping: [{ path: "", service: s, tag: t }]\n`);
    assert.deepEqual(p, [
      'g.yaml:2:5: routes[0]: missing required key "service"',
      'g.yaml:2:5: routes[0]: missing required key "path"',
      'g.yaml:2:13: routes[0].method: "FETCH" is not one of GET, POST, PUT, DELETE, PATCH, HEAD, OPTIONS',
      'g.yaml:8:23: routes[1].mapping[0].path: must not be empty',
    ]);
  });
  it('an empty file and a non-list routes are clear errors', () => {
    assert.deepEqual(problems(''), ['g.yaml:1:1: the configuration file is empty; it needs at least a "routes" list']);
    assert.deepEqual(problems('routes: 3'), ['g.yaml:1:9: routes: expected a list, got number 3']);
  });
  it('rejects a route shadowing /health when there is no basePath', () => {
    assert.deepEqual(problems('routes: [{ method: GET, route: /health, service: s, path: /h }]\nconfig: { basePath: "" }'), [
      'g.yaml:1:32: routes[0].route: "/health" is answered by the gateway itself; set config.basePath or choose another route',
    ]);
  });
  it('rejects a malformed basePath', () => {
    assert.deepEqual(problems('routes: []\nconfig: { basePath: api/ }'), [
      'g.yaml:2:21: config.basePath: "api/" must start with "/", not end with "/", and hold no {param}, "?" or "#" (use "" for no prefix)',
    ]);
  });
  it('rejects a query in route and a path not starting with /', () => {
    assert.deepEqual(problems('routes: [{ method: GET, route: "/a?x=1", service: s, path: a }]'), [
      'g.yaml:1:32: routes[0].route: must not contain "?" or "#"; client query parameters are forwarded automatically',
      'g.yaml:1:60: routes[0].path: "a" must start with "/"',
    ]);
  });
  it('a {param} glued to text, or router wildcards, are rejected (the router would misread them)', () => {
    assert.deepEqual(problems('routes: [{ method: GET, route: "/u/{id}y", service: s, path: "/users/{id}" }]'), [
      'g.yaml:1:32: routes[0].route: a {param} must be followed by "/", "." or "-" (or end the route)',
    ]);
    assert.deepEqual(problems('routes: [{ method: GET, route: "/files/*", service: s, path: "/f" }]'), [
      'g.yaml:1:32: routes[0].route: "*", "(" and ")" are not allowed; use {param} segments',
    ]);
    assert.deepEqual(problems('routes: [{ method: GET, route: "/f/{name}.{ext}", service: s, path: "/f/{name}/{ext}" }]'), []);
  });
  it('HEAD and GET on one path are distinct routes', () => {
    assert.deepEqual(problems(`routes:\n${ROUTE}  - { method: HEAD, route: /a, service: s, path: /a }`), []);
  });
});
