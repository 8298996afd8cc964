import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from './load.js';
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

describe('config defaults (docs/design-decisions.md "Configuration")', () => {
  it('applies every default', () => {
    const r = loadConfigText(`routes:\n${ROUTE}`, 'g.yaml', {});
    assert.ok(r.ok);
    const { settings, routes, prefix } = r.config;
    assert.equal(prefix, '/api');
    assert.deepEqual(settings.circuitBreaker, { enabled: false, maxFailures: 5, timeoutSec: 30, halfOpenRequests: 1 });
    assert.deepEqual(settings.mappingCache, { enabled: false, ttlSec: 60, maxSize: 1000, store: 'local' });
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

  it('gives the routes that name one service one origin', () => {
    const other = '  - { method: GET, route: /c, service: "localhost:3001", path: /c }\n';
    const r = loadConfigText(`routes:\n${ROUTE}${ROUTE.replace('/a', '/b').replace('/a', '/b')}${other}`, 'g.yaml', {});
    assert.ok(r.ok);
    const [a, b, c] = r.config.routes;
    assert.equal(a!.origin, b!.origin);
    assert.notEqual(a!.origin, c!.origin);
    assert.deepEqual([a!.origin.key, c!.origin.key], ['http://localhost:3000', 'http://localhost:3001']);
  });

  it('protects routes with defaultProtected unless public', () => {
    const r = loadConfigText(
      `routes:\n${ROUTE}  - { method: GET, route: /b, service: x, path: /b, public: true }\nconfig: { auth: { secret: s, defaultProtected: true } }`,
      'g.yaml',
      {},
    );
    assert.ok(r.ok);
    assert.deepEqual(
      r.config.routes.map((x) => x.requiresAuth),
      [true, false],
    );
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
    const yaml = [
      'routes:',
      '  - method: GET',
      '    route: /a',
      '    service: ${SVC}',
      '    path: /a',
      'config:',
      '  port: ${P:-9000}',
      '  host: ${H:-127.0.0.1}',
      '  auth:',
      '    secret: "pre-${S}-$$"',
    ].join('\n');
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
    const r = loadConfigText(
      'routes: []\nconfig:\n  port: ${P}\n  circuitBreaker:\n    enabled: ${E}\n  host: h${P}',
      'g.yaml',
      { P: '9000', E: 'true' },
    );
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.config.settings.port, 9000);
    assert.equal(r.config.settings.circuitBreaker.enabled, true);
    assert.equal(r.config.settings.host, 'h9000');
    // The value is named by its variable, never repeated (config/hide-env-values.ts).
    assert.deepEqual(problems('routes: []\nconfig:\n  port: ${P}', { P: '80 # x' }), [
      'g.yaml:3:9: config.port: expected a number, got the string "${P}"',
    ]);
  });
  it('an empty variable takes the default', () => {
    const r = loadConfigText('routes: []\nconfig:\n  host: ${H:-h}', 'g.yaml', { H: '' });
    assert.ok(r.ok);
    assert.equal(r.config.settings.host, 'h');
  });
  it('a missing variable is reported once, at its position', () => {
    assert.deepEqual(problems(`routes: []\nconfig:\n  host: \${NOPE}\n`), [
      'g.yaml:3:9: environment variable NOPE is not set (export NOPE=..., or write ${NOPE:-default} to give a default)',
    ]);
  });
});

describe('validation problems', () => {
  it('reports every problem at once, sorted by position', () => {
    const p = problems(
      `routes:\n  - method: FETCH\n    route: /a\n  - method: GET\n    route: /a\n    service: s\n    path: /a\n    mapping: [{ path: "", service: s, tag: t }]\n`,
    );
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
    assert.deepEqual(
      problems('routes: [{ method: GET, route: /health, service: s, path: /h }]\nconfig: { basePath: "" }'),
      [
        'g.yaml:1:32: routes[0].route: "/health" is answered by the gateway itself; set config.basePath or choose another route',
      ],
    );
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
    assert.deepEqual(problems('routes: [{ method: GET, route: "/files/(x)", service: s, path: "/f" }]'), [
      'g.yaml:1:32: routes[0].route: "(" and ")" are not allowed; use {param} segments',
    ]);
    assert.deepEqual(
      problems('routes: [{ method: GET, route: "/f/{name}.{ext}", service: s, path: "/f/{name}/{ext}" }]'),
      [],
    );
  });
  it('HEAD and GET on one path are distinct routes', () => {
    assert.deepEqual(problems(`routes:\n${ROUTE}  - { method: HEAD, route: /a, service: s, path: /a }`), []);
  });
});

describe('prefix routes and hosts (docs/routing.md)', () => {
  const one = (fields: string) => problems(`routes:\n  - { method: GET, service: s, ${fields} }`);
  it('a prefix route ends in /*, once, and its path says where the rest goes', () => {
    assert.deepEqual(one('route: "/static/*", path: "/files/*"'), []);
    assert.deepEqual(one('route: "/t/{id}/*", path: "/x/{id}/*/raw?v=1"'), []);
    assert.deepEqual(one('route: "/static*", path: "/files"'), [
      'g.yaml:2:39: routes[0].route: a prefix route owns whole segments, so "*" must follow "/": write "/static/*" (it owns /static/x, never /staticx)',
    ]);
    assert.deepEqual(one('route: "/a/*/b", path: "/b"'), [
      'g.yaml:2:39: routes[0].route: "*" may only end a prefix route, once, as "/*" (the rest of the path goes there)',
    ]);
    assert.deepEqual(one('route: "/static/*", path: "/files"'), [
      `g.yaml:2:58: routes[0].path: a prefix route's path must say where the rest goes with "*" (/files/*)`,
    ]);
    assert.deepEqual(one('route: "/static/*", path: "/files*"'), [
      'g.yaml:2:58: routes[0].path: "*" must be one whole segment of the path ("/files/*" or "/files/*/raw"), once',
    ]);
    assert.deepEqual(one('route: "/static", path: "/files/*"'), [
      'g.yaml:2:56: routes[0].path: "*" takes the rest of a prefix route, and this route does not end in "/*" (write %2A for a literal "*")',
    ]);
  });
  it('bad hosts entries, each with its place', () => {
    assert.deepEqual(
      one(
        'route: /a, path: /a, hosts: ["*.", "a.*.com", "a b.com", "api.example.com:8080", "**.x.com", "http://a.com", "::1", "ok.com", "OK.com."]',
      ),
      [
        'g.yaml:2:61: routes[0].hosts[0]: "*." names no domain after "*."',
        'g.yaml:2:67: routes[0].hosts[1]: "a.*.com" may hold "*" only as a whole first label (*.example.com)',
        'g.yaml:2:78: routes[0].hosts[2]: "a b.com" holds a space',
        'g.yaml:2:89: routes[0].hosts[3]: "api.example.com:8080" holds a port; hosts match whatever port the client used',
        'g.yaml:2:113: routes[0].hosts[4]: "**.x.com" may hold one "*", as a whole first label (*.example.com)',
        'g.yaml:2:125: routes[0].hosts[5]: "http://a.com" is a URL; write the host name alone',
        'g.yaml:2:141: routes[0].hosts[6]: "::1" is an IPv6 address: write it in brackets ([::1])',
        'g.yaml:2:158: routes[0].hosts[8]: "OK.com." is listed twice',
      ],
    );
    assert.deepEqual(one('route: /a, path: /a, hosts: ["[::1]", 10.1.2.3, "*.example.com", api.example.com.]'), []);
    assert.equal(one('route: /a, path: /a, hosts: []').length, 1);
  });
  it('conflicts name both places; the same path on two hosts is no conflict', () => {
    const yaml = `routes:
  - { method: GET, route: "/s/*", service: s, path: "/a/*", hosts: [a.example.com] }
  - { method: GET, route: "/s/*", service: s, path: "/b/*", hosts: [b.example.com] }
  - { method: GET, route: "/s/*", service: s, path: "/c/*" }
  - { method: GET, route: "/s/*", service: s, path: "/d/*", hosts: [B.example.com, c.example.com] }
  - { method: GET, route: "/u/{id}", service: s, path: "/u/{id}" }
  - { method: GET, route: "/u/{key}", service: s, path: "/u/{key}" }
`;
    assert.deepEqual(problems(yaml), [
      'g.yaml:5:27: routes[3]: GET /s/* on host b.example.com is already defined by routes[1] (g.yaml:3:27)',
      'g.yaml:7:27: routes[5]: GET /u/{key} is already defined by routes[4] (g.yaml:6:27)',
    ]);
  });
  it('a prefix route cannot aggregate', () => {
    const yaml = `routes:
  - method: GET
    route: /s/*
    backends: [{ service: s, path: /a }]
`;
    assert.deepEqual(problems(yaml), [
      'g.yaml:4:15: routes[0].backends: a prefix route forwards the rest of its path to one backend; an aggregated route cannot be one',
    ]);
  });
});

describe('HEAD routes', () => {
  it('HEAD and GET on one path are distinct routes', () => {
    assert.deepEqual(problems(`routes:\n${ROUTE}  - { method: HEAD, route: /a, service: s, path: /a }`), []);
  });
});

describe('first-hour mistakes', () => {
  const notices = (yaml: string, env: NodeJS.ProcessEnv = {}) => {
    const r = loadConfigText(yaml, 'g.yaml', env);
    assert.ok(r.ok, r.ok ? '' : r.problems.map(formatProblem).join('\n'));
    return r.notices.map(formatProblem);
  };

  it('an unset secret is one problem at its line, with no default suggested and no cascade', () => {
    const out = problems(`routes:\n${ROUTE}config:\n  auth:\n    defaultProtected: true\n    secret: \${JWT_SECRET}\n`);
    assert.deepEqual(out, [
      'g.yaml:9:13: environment variable JWT_SECRET is not set (export JWT_SECRET=... before starting portico)',
    ]);
    assert.doesNotMatch(out[0]!, /default/);
    // Only credentials go without a default: the key decides, not the variable's name.
    assert.match(
      problems(`routes:\n${ROUTE}config:\n  auth:\n    authService: \${AUTH_TOKEN_URL}\n`)[0]!,
      /export AUTH_TOKEN_URL=\.\.\., or write \$\{AUTH_TOKEN_URL:-default\} to give a default\)$/,
    );
  });

  it('hints short keys through transpositions, and a misspelt required key only once', () => {
    assert.deepEqual(
      problems(
        `routes:\n${ROUTE}    mapping:\n      - path: /u/{id}\n        service: localhost:3001\n        tga: user\n`,
      ),
      ['g.yaml:9:9: routes[0].mapping[0]: unknown key "tga" (did you mean "tag"?)'],
    );
    assert.deepEqual(problems(`routes: []\nconfig:\n  cors:\n    origin: ["https://a.example"]\n`), [
      'g.yaml:4:5: config.cors: unknown key "origin" (did you mean "origins"?)',
    ]);
  });

  it('an outdented key names the object it belongs to, preferring the one written just above', () => {
    assert.deepEqual(
      problems(
        `routes: []\nconfig:\n  rateLimit:\n    enabled: false\n  mappingCache:\n    ttlSec: 5\n  enabled: true\n`,
      ),
      [
        'g.yaml:7:3: config: unknown key "enabled" (did you mean mappingCache.enabled? check its indentation: it belongs under "mappingCache:" on line 5)',
      ],
    );
  });

  it('a YAML merge key is named as such, not guessed at', () => {
    assert.deepEqual(
      problems(
        `routes:\n  - <<: { public: true }\n    method: GET\n    route: /a\n    service: localhost:3000\n    path: /a\n`,
      ),
      ['g.yaml:2:5: routes[0]: unknown key "<<" (YAML merge keys are not supported: write the keys out)'],
    );
  });

  it('check warns about a secret shorter than 32 bytes; the file stays valid', () => {
    assert.deepEqual(notices(`routes:\n${ROUTE}config:\n  auth: { secret: tooshort }\n`), [
      'g.yaml:7:19: warning: config.auth.secret is shorter than 32 bytes (8); tokens signed with it are easier to forge (use 32 random bytes or more, e.g. openssl rand -base64 32)',
    ]);
    assert.deepEqual(notices(`routes:\n${ROUTE}config:\n  auth: { secret: ${'x'.repeat(32)} }\n`), []);
    // The secret is not used when an auth service validates tokens.
    assert.deepEqual(notices(`routes:\n${ROUTE}config:\n  auth: { secret: short, authService: localhost:4000 }\n`), []);
  });

  it('check warns when a buffered route accepts bodies no spill cap would let through', () => {
    const upload = (extra: string, route = '/u') =>
      `  - { method: POST, route: ${route}, service: s, path: /u${extra} }\n`;
    assert.deepEqual(
      notices(
        `routes:\n${upload(', maxBodyBytes: 50000000')}${upload('', '/v')}config:\n  limits: { maxBodyBytes: 40000000 }\n`,
      ),
      [
        'g.yaml:2:68: warning: routes[0].maxBodyBytes: 50000000 is above the spill caps (limits.spillMaxBytesPerClient 33554432, limits.spillMaxBytes 268435456): a buffered body larger than the smaller cap is always refused (raise the caps, or set requestBuffering: false on the routes that take such bodies)',
        'g.yaml:5:27: warning: config.limits.maxBodyBytes: 40000000 is above the spill caps (limits.spillMaxBytesPerClient 33554432, limits.spillMaxBytes 268435456): a buffered body larger than the smaller cap is always refused (raise the caps, or set requestBuffering: false on the routes that take such bodies)',
      ],
    );
    // Streamed and validated bodies never spill; raised caps hold the body.
    assert.deepEqual(notices(`routes:\n${upload(', maxBodyBytes: 50000000, requestBuffering: false')}`), []);
    assert.deepEqual(
      notices(
        `routes:\n${upload(', maxBodyBytes: 50000000')}config:\n  limits: { spillMaxBytesPerClient: 50000000 }\n`,
      ),
      [],
    );
  });

  it('accepts tainha-gateway timeouts, says what each became, and maps idleTimeoutSec onto keepAliveSec', () => {
    const yaml = `routes:\n${ROUTE}config:\n  readTimeoutSec: 15\n  writeTimeoutSec: 30\n  idleTimeoutSec: 120\n`;
    const r = loadConfigText(yaml, 'g.yaml', {});
    assert.ok(r.ok);
    assert.equal(r.config.settings.timeouts.keepAliveSec, 120);
    assert.equal(r.config.settings.readTimeoutSec, 15);
    assert.equal(r.config.settings.writeTimeoutSec, 30);
    assert.deepEqual(r.notices.map(formatProblem), [
      'g.yaml:7:19: note: config.readTimeoutSec: 15 -> the whole request (head and body) must arrive within 15 s, else 408',
      'g.yaml:8:20: note: config.writeTimeoutSec: 30 -> a client that takes none of a waiting response for 30 s is disconnected (idle or flowing streams are not cut)',
      'g.yaml:9:19: note: config.idleTimeoutSec: 120 -> timeouts.keepAliveSec',
    ]);
  });

  it('refuses idleTimeoutSec together with timeouts.keepAliveSec', () => {
    assert.deepEqual(problems(`routes:\n${ROUTE}config:\n  idleTimeoutSec: 120\n  timeouts: { keepAliveSec: 90 }\n`), [
      'g.yaml:7:19: config.idleTimeoutSec and config.timeouts.keepAliveSec both set the keep-alive idle time (keep one of them)',
    ]);
  });
});

describe('problem lines stay short', () => {
  it('clips a huge value quoted from the file', () => {
    const [line] = problems(`routes: []\nconfig:\n  basePath: ${'x'.repeat(100_000)}\n`);
    assert.ok(line!.length < 600, `${line!.length} characters`);
    assert.match(line!, /^g\.yaml:3:13: config\.basePath: "xxx+\.\.\.$/);
  });
});

describe('config.auth.introspection (docs/authentication.md "OAuth2 token introspection")', () => {
  const INTROSPECTION = `    introspection:
      url: https://idp.example/oauth2/introspect
      clientId: portico
      clientSecret: \${IDP_SECRET}
`;
  it('applies the defaults and protects routes like any token mode', () => {
    const r = loadConfigText(
      `routes:\n${ROUTE}config:\n  auth:\n    defaultProtected: true\n${INTROSPECTION}`,
      'g.yaml',
      { IDP_SECRET: 'a-client-secret' },
    );
    assert.ok(r.ok, r.ok ? '' : r.problems.map(formatProblem).join('\n'));
    assert.deepEqual(r.config.settings.auth.introspection, {
      url: 'https://idp.example/oauth2/introspect',
      clientId: 'portico',
      clientSecret: 'a-client-secret',
      cacheMaxSec: 60,
      timeoutSec: 5,
    });
    assert.equal(r.config.routes[0]!.requiresAuth, true);
  });

  it('refuses it beside another token mode, at both places', () => {
    const yaml = `routes:\n${ROUTE}config:\n  auth:\n    secret: s\n    authService: auth:9000\n${INTROSPECTION}`;
    assert.deepEqual(problems(yaml, { IDP_SECRET: 'a-client-secret' }), [
      'g.yaml:8:13: config.auth.secret: cannot be used with config.auth.introspection; choose one way to validate tokens',
      'g.yaml:9:18: config.auth.authService: cannot be used with config.auth.introspection; choose one way to validate tokens',
      'g.yaml:11:7: config.auth.introspection: cannot be used with config.auth.secret; choose one way to validate tokens',
      'g.yaml:11:7: config.auth.introspection: cannot be used with config.auth.authService; choose one way to validate tokens',
    ]);
  });

  it('refuses a URL that is not http(s), a URL with credentials, missing credentials and bad numbers', () => {
    const yaml = `routes:\n${ROUTE}config:\n  auth:\n    introspection: { url: "ftp://idp/x", clientSecret: "" , cacheMaxSec: -1, timeoutSec: 0 }\n`;
    const found = problems(yaml);
    assert.ok(
      found.some((p) => p.includes('config.auth.introspection.url: "ftp://idp/x" must be an http:// or https:// URL')),
      found.join('\n'),
    );
    assert.ok(
      found.some((p) => /clientId/.test(p)),
      found.join('\n'),
    );
    assert.ok(
      found.some((p) => /clientSecret/.test(p)),
      found.join('\n'),
    );
    assert.ok(
      found.some((p) => /cacheMaxSec/.test(p)),
      found.join('\n'),
    );
    assert.ok(
      found.some((p) => /timeoutSec/.test(p)),
      found.join('\n'),
    );
    const withUser = `routes:\n${ROUTE}config:\n  auth:\n    introspection: { url: "https://u:p@idp/x", clientId: a, clientSecret: b }\n`;
    assert.deepEqual(
      problems(withUser).filter((p) => p.includes('credentials')).length,
      1,
      problems(withUser).join('\n'),
    );
  });

  it('a route that requires a token is valid with introspection alone', () => {
    const yaml = `routes:\n  - { method: GET, route: /a, service: "localhost:3000", path: /a, protected: true }\nconfig:\n  auth:\n${INTROSPECTION}`;
    assert.deepEqual(problems(yaml, { IDP_SECRET: 'a-client-secret' }), []);
  });
});
