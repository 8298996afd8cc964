/**
 * Local JWT mode (`config.auth.secret`) through the real gateway, with real tokens, plus the
 * identity-header rules shared by every mode (stripHeaders, claim headers replacing client ones).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { request } from 'undici';
import { generateKeyPair, SignJWT, UnsecuredJWT, type JWTPayload } from 'jose';
import { closedPort, json, startBackend, type SeenRequest, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import type { GatewayEvents } from '../../src/observability/events.js';
import { closeAll } from '../support/close-all.js';

const SECRET = 'integration-secret-0123456789abcdef0123456789';
const key = new TextEncoder().encode(SECRET);
const sign = (claims: JWTPayload, alg = 'HS256') => new SignJWT(claims).setProtectedHeader({ alg }).sign(key);
const nowSec = () => Math.floor(Date.now() / 1000);

/** Every value of a header the backend received, by case-insensitive name, from the raw list. */
function rawValues(seen: SeenRequest | undefined, name: string): string[] {
  const raw = seen?.rawHeaders ?? [];
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name.toLowerCase()) out.push(raw[i + 1]!);
  return out;
}

describe('local JWT mode', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  const results: GatewayEvents['auth:result'][] = [];
  before(async () => {
    backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    gw = await startGateway(`
routes:
  - { method: GET, route: /orders, service: ${backend.host}, path: /orders }
  - { method: POST, route: /orders, service: ${backend.host}, path: /orders }
  - { method: GET, route: /catalog, service: ${backend.host}, path: /catalog, public: true }
config:
  auth:
    secret: ${SECRET}
    defaultProtected: true
    issuer: https://idp.example
    audience: portico-tests
    clockToleranceSec: 5
`);
    gw.gateway.events.on('auth:result', (e) => results.push(e));
  });
  after(() => closeAll(gw, backend));

  const good = (extra: JWTPayload = {}) =>
    sign({
      iss: 'https://idp.example',
      aud: 'portico-tests',
      exp: nowSec() + 60,
      sub: 'u-1',
      role: 'editor',
      ...extra,
    });

  it('a valid token passes: claims become X-<claim>, Authorization is forwarded', async () => {
    const token = await good({ email: 'ada@example.com', level: 3 });
    const before = backend.seen.length;
    const res = await request(`${gw.url}/api/orders`, {
      headers: { authorization: `Bearer ${token}`, 'x-request-id': 'local-ok-1' },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(await res.body.json(), { ok: true });
    assert.equal(backend.seen.length, before + 1);
    const seen = backend.seen.at(-1);
    assert.deepEqual(rawValues(seen, 'x-sub'), ['u-1']);
    assert.deepEqual(rawValues(seen, 'x-role'), ['editor']);
    assert.deepEqual(rawValues(seen, 'x-email'), ['ada@example.com']);
    assert.deepEqual(rawValues(seen, 'x-iss'), ['https://idp.example']);
    assert.deepEqual(rawValues(seen, 'x-aud'), ['portico-tests']);
    assert.deepEqual(rawValues(seen, 'x-level'), [], 'numbers are not sent');
    assert.deepEqual(rawValues(seen, 'authorization'), [`Bearer ${token}`]);
    assert.deepEqual(results.at(-1), { requestId: 'local-ok-1', routeId: 'GET /orders', outcome: 'ok' });
  });

  for (const alg of ['HS384', 'HS512']) {
    it(`${alg} tokens pass`, async () => {
      const token = await sign({ iss: 'https://idp.example', aud: 'portico-tests', sub: alg }, alg);
      const res = await request(`${gw.url}/api/orders`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.statusCode, 200);
      await res.body.dump();
      assert.deepEqual(rawValues(backend.seen.at(-1), 'x-sub'), [alg]);
    });
  }

  const refusals: {
    name: string;
    authorization: () => Promise<string | undefined>;
    code: string;
    message: string;
    outcome: string;
  }[] = [
    {
      name: 'no Authorization header',
      authorization: async () => undefined,
      code: 'GW_AUTH_MISSING',
      message: 'Missing bearer token',
      outcome: 'missing',
    },
    {
      name: 'Basic credentials',
      authorization: async () => 'Basic dXNlcjpwYXNz',
      code: 'GW_AUTH_INVALID',
      message: 'Invalid or expired token',
      outcome: 'invalid',
    },
    {
      name: 'Bearer without a token',
      authorization: async () => 'Bearer',
      code: 'GW_AUTH_INVALID',
      message: 'Invalid or expired token',
      outcome: 'invalid',
    },
    {
      name: 'garbage token',
      authorization: async () => 'Bearer abc.def.ghi',
      code: 'GW_AUTH_INVALID',
      message: 'Invalid or expired token',
      outcome: 'invalid',
    },
    {
      name: 'wrong secret',
      authorization: async () =>
        `Bearer ${await new SignJWT({ iss: 'https://idp.example', aud: 'portico-tests' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(`${SECRET}x`))}`,
      code: 'GW_AUTH_INVALID',
      message: 'Invalid or expired token',
      outcome: 'invalid',
    },
    {
      name: 'expired beyond clockToleranceSec',
      authorization: async () => `Bearer ${await good({ exp: nowSec() - 10 })}`,
      code: 'GW_AUTH_INVALID',
      message: 'Invalid or expired token',
      outcome: 'invalid',
    },
    {
      name: 'nbf in the future beyond clockToleranceSec',
      authorization: async () => `Bearer ${await good({ nbf: nowSec() + 60 })}`,
      code: 'GW_AUTH_INVALID',
      message: 'Invalid or expired token',
      outcome: 'invalid',
    },
    {
      name: 'wrong issuer',
      authorization: async () => `Bearer ${await good({ iss: 'https://evil.example' })}`,
      code: 'GW_AUTH_INVALID',
      message: 'Invalid or expired token',
      outcome: 'invalid',
    },
    {
      name: 'wrong audience',
      authorization: async () => `Bearer ${await good({ aud: 'someone-else' })}`,
      code: 'GW_AUTH_INVALID',
      message: 'Invalid or expired token',
      outcome: 'invalid',
    },
    {
      name: 'alg none',
      authorization: async () =>
        `Bearer ${new UnsecuredJWT({ iss: 'https://idp.example', aud: 'portico-tests', role: 'admin' }).encode()}`,
      code: 'GW_AUTH_INVALID',
      message: 'Invalid or expired token',
      outcome: 'invalid',
    },
    {
      name: 'an RS256 token (algorithm confusion)',
      authorization: async () =>
        `Bearer ${await new SignJWT({ iss: 'https://idp.example', aud: 'portico-tests' }).setProtectedHeader({ alg: 'RS256' }).sign((await generateKeyPair('RS256')).privateKey)}`,
      code: 'GW_AUTH_INVALID',
      message: 'Invalid or expired token',
      outcome: 'invalid',
    },
  ];
  for (const r of refusals) {
    it(`${r.name}: 401 JSON ${r.code}, backend not called`, async () => {
      const authorization = await r.authorization();
      const before = backend.seen.length;
      const res = await request(`${gw.url}/api/orders`, {
        headers: { ...(authorization === undefined ? {} : { authorization }), 'x-request-id': `refuse-${r.code}` },
      });
      assert.equal(res.statusCode, 401);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.headers['x-portico-error'], r.code);
      assert.equal(res.headers['x-request-id'], `refuse-${r.code}`);
      assert.match(String(res.headers['www-authenticate']), /^Bearer realm="portico"/);
      assert.deepEqual(await res.body.json(), { error: r.message, success: false });
      assert.equal(backend.seen.length, before);
      assert.equal(results.at(-1)?.outcome, r.outcome);
    });
  }

  it('a refused POST has its body drained and the connection stays usable', async () => {
    const before = backend.seen.length;
    const res = await request(`${gw.url}/api/orders`, { method: 'POST', body: 'x'.repeat(100_000) });
    assert.equal(res.statusCode, 401);
    await res.body.dump();
    const token = await good();
    const ok = await request(`${gw.url}/api/orders`, {
      method: 'POST',
      body: '{"a":1}',
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(ok.statusCode, 200);
    await ok.body.dump();
    assert.equal(backend.seen.length, before + 1);
    assert.equal(backend.seen.at(-1)?.body.toString(), '{"a":1}');
  });

  it('the refusal is logged with the request id and the reason', async () => {
    const res = await request(`${gw.url}/api/orders`, {
      headers: { authorization: `Bearer ${await good({ exp: nowSec() - 100 })}`, 'x-request-id': 'log-me' },
    });
    await res.body.dump();
    const line = gw.logs.find((l) => l.msg === 'auth refused' && l.reqId === 'log-me');
    assert.equal(line?.outcome, 'invalid');
    assert.match(String(line?.detail), /ERR_JWT_EXPIRED/);
  });

  it('a public route never validates: no token, or a garbage one, both pass', async () => {
    for (const headers of [{}, { authorization: 'Bearer garbage' }]) {
      const count = results.length;
      const res = await request(`${gw.url}/api/catalog`, { headers });
      assert.equal(res.statusCode, 200);
      await res.body.dump();
      assert.equal(results.length, count, 'no auth:result for a public route');
    }
    assert.deepEqual(rawValues(backend.seen.at(-1), 'authorization'), ['Bearer garbage']);
  });

  it('claims that cannot be headers are skipped and logged; the request still passes', async () => {
    const token = await good({ role: 'user\r\nX-admin: yes', 'bad name': 'x', tenant: 't1' });
    const res = await request(`${gw.url}/api/orders`, {
      headers: { authorization: `Bearer ${token}`, 'x-request-id': 'bad-claims' },
    });
    assert.equal(res.statusCode, 200);
    await res.body.dump();
    const seen = backend.seen.at(-1);
    assert.deepEqual(rawValues(seen, 'x-role'), []);
    assert.deepEqual(rawValues(seen, 'x-admin'), []);
    assert.deepEqual(rawValues(seen, 'x-tenant'), ['t1']);
    const warn = gw.logs.find(
      (l) => l.msg === 'auth: claims skipped, not valid as headers' && l.reqId === 'bad-claims',
    );
    assert.deepEqual(warn?.skipped, [
      { claim: 'role', reason: 'value' },
      { claim: 'bad name', reason: 'name' },
    ]);
  });
});

describe('identity headers cannot be spoofed', () => {
  let backend: TestBackend;
  before(async () => {
    backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
  });
  after(async () => {
    await backend?.close();
  });
  const routes = (host: string) => `
routes:
  - { method: GET, route: /private, service: ${host}, path: /private }
  - method: GET
    route: /public
    service: ${host}
    path: /public
    public: true`;

  it('default stripHeaders: a client X-role (any case) never reaches the backend, on public and protected routes', async () => {
    const gw = await startGateway(`${routes(backend.host)}
config:
  auth: { secret: ${SECRET}, defaultProtected: true }
`);
    try {
      // A token with no role claim: nothing may put X-role back.
      const token = await sign({ sub: 'u-1' });
      const spoof = {
        'X-role': 'admin',
        'x-USERID': '1',
        'X-Username': 'root',
        'x-sub': 'root',
        'X-EMAIL': 'root@x',
        'x-other': 'kept',
      };
      for (const [path, extra] of [
        ['/api/public', {}],
        ['/api/private', { authorization: `Bearer ${token}` }],
      ] as const) {
        const res = await request(`${gw.url}${path}`, { headers: { ...spoof, ...extra } });
        assert.equal(res.statusCode, 200, path);
        await res.body.dump();
        const seen = backend.seen.at(-1);
        assert.deepEqual(rawValues(seen, 'x-role'), [], path);
        assert.deepEqual(rawValues(seen, 'x-userid'), [], path);
        assert.deepEqual(rawValues(seen, 'x-username'), [], path);
        assert.deepEqual(rawValues(seen, 'x-email'), [], path);
        assert.deepEqual(rawValues(seen, 'x-sub'), path === '/api/private' ? ['u-1'] : [], path);
        assert.deepEqual(rawValues(seen, 'x-other'), ['kept'], path);
      }
    } finally {
      await gw.close();
    }
  });

  it('a claim header replaces a client header of the same name, case-insensitively: one value, never merged', async () => {
    const gw = await startGateway(`${routes(backend.host)}
config:
  auth: { secret: ${SECRET}, defaultProtected: true }
`);
    try {
      // X-tenant is not in the strip list: only the claim replacement keeps the client's value out.
      const token = await sign({ sub: 'u-1', tenant: 't1' });
      const res = await request(`${gw.url}/api/private`, {
        headers: { authorization: `Bearer ${token}`, 'x-TENANT': 'evil', 'X-Tenant': 'evil2' },
      });
      assert.equal(res.statusCode, 200);
      await res.body.dump();
      assert.deepEqual(rawValues(backend.seen.at(-1), 'x-tenant'), ['t1']);
    } finally {
      await gw.close();
    }
  });

  it('a custom stripHeaders list replaces the default list', async () => {
    const gw = await startGateway(`${routes(backend.host)}
config:
  auth:
    secret: ${SECRET}
    defaultProtected: true
    stripHeaders: [X-tenant, X-Internal-Role]
`);
    try {
      for (const [path, extra] of [
        ['/api/public', {}],
        ['/api/private', { authorization: `Bearer ${await sign({ sub: 'u-1' })}` }],
      ] as const) {
        const res = await request(`${gw.url}${path}`, {
          headers: { 'x-tenant': 'evil', 'x-internal-role': 'admin', 'x-role': 'client-says', ...extra },
        });
        assert.equal(res.statusCode, 200);
        await res.body.dump();
        const seen = backend.seen.at(-1);
        assert.deepEqual(rawValues(seen, 'x-tenant'), [], path);
        assert.deepEqual(rawValues(seen, 'x-internal-role'), [], path);
        assert.deepEqual(
          rawValues(seen, 'x-role'),
          ['client-says'],
          `${path}: X-role is no longer stripped once the list is replaced`,
        );
      }
    } finally {
      await gw.close();
    }
  });

  it('with defaultProtected false every route is public and no token is checked', async () => {
    const gw = await startGateway(`${routes(backend.host)}
config:
  auth: { secret: ${SECRET} }
`);
    try {
      const res = await request(`${gw.url}/api/private`, {
        headers: { authorization: 'Bearer garbage', 'x-role': 'admin' },
      });
      assert.equal(res.statusCode, 200);
      await res.body.dump();
      assert.deepEqual(
        rawValues(backend.seen.at(-1), 'x-role'),
        [],
        'identity headers are stripped on public routes too',
      );
    } finally {
      await gw.close();
    }
  });
});

describe('several Authorization headers (a backend may read the last one, the gateway checks the first)', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let wsPort: number;
  const results: GatewayEvents['auth:result'][] = [];
  before(async () => {
    backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    // Nothing listens there: an upgrade that got past auth would answer 502, not 400.
    wsPort = await closedPort();
    gw = await startGateway(`
routes:
  - { method: GET, route: /private, service: ${backend.host}, path: /private }
  - { method: GET, route: /public, service: ${backend.host}, path: /public, public: true }
  - { method: GET, route: /socket, service: 127.0.0.1:${wsPort}, path: /socket, isWebSocket: true }
config:
  auth: { secret: ${SECRET}, defaultProtected: true }
`);
    gw.gateway.events.on('auth:result', (e) => results.push(e));
  });
  after(() => closeAll(gw, backend));

  const forged = () =>
    new SignJWT({ sub: 'root', role: 'admin' })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('not-the-gateway-secret-0123456789abcdef'));
  const cases: { name: string; headers: () => Promise<string[]> }[] = [
    {
      name: 'valid first, forged second',
      headers: async () => [
        'authorization',
        `Bearer ${await sign({ sub: 'u-1' })}`,
        'authorization',
        `Bearer ${await forged()}`,
      ],
    },
    {
      name: 'forged first, valid second',
      headers: async () => [
        'Authorization',
        `Bearer ${await forged()}`,
        'authorization',
        `Bearer ${await sign({ sub: 'u-1' })}`,
      ],
    },
    {
      name: 'the same valid token twice, names in other cases',
      headers: async () => {
        const t = `Bearer ${await sign({ sub: 'u-1' })}`;
        return ['AUTHORIZATION', t, 'Authorization', t];
      },
    },
    {
      name: 'a valid token and an empty second header',
      headers: async () => ['authorization', `Bearer ${await sign({ sub: 'u-1' })}`, 'authorization', ''],
    },
  ];
  for (const c of cases) {
    it(`protected route, ${c.name}: 400 JSON GW_AUTH_AMBIGUOUS, backend not called`, async () => {
      const before = backend.seen.length;
      const res = await request(`${gw.url}/api/private`, {
        headers: [...(await c.headers()), 'x-request-id', 'two-auth'],
      });
      assert.equal(res.statusCode, 400);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.headers['x-portico-error'], 'GW_AUTH_AMBIGUOUS');
      assert.equal(res.headers['x-request-id'], 'two-auth');
      assert.deepEqual(await res.body.json(), { error: 'Several Authorization headers', success: false });
      assert.equal(backend.seen.length, before);
      assert.deepEqual(results.at(-1), {
        requestId: 'two-auth',
        routeId: 'GET /private',
        outcome: 'invalid',
        detail: 'several Authorization headers',
      });
    });
  }

  it('protected route, one Authorization header: forwarded once, as sent', async () => {
    const token = `Bearer ${await sign({ sub: 'u-1' })}`;
    const res = await request(`${gw.url}/api/private`, { headers: ['Authorization', token] });
    assert.equal(res.statusCode, 200);
    await res.body.dump();
    assert.deepEqual(rawValues(backend.seen.at(-1), 'authorization'), [token]);
  });

  it('public route: unchanged, both headers reach the backend and nothing is validated', async () => {
    const count = results.length;
    const res = await request(`${gw.url}/api/public`, {
      headers: ['authorization', 'Bearer one', 'Authorization', 'Bearer two'],
    });
    assert.equal(res.statusCode, 200);
    await res.body.dump();
    assert.deepEqual(rawValues(backend.seen.at(-1), 'authorization'), ['Bearer one', 'Bearer two']);
    assert.equal(results.length, count);
  });

  it('WebSocket upgrade with two Authorization headers: 400 GW_AUTH_AMBIGUOUS, no backend connection attempted', async () => {
    const token = `Bearer ${await sign({ sub: 'u-1' })}`;
    const head = [
      'GET /api/socket HTTP/1.1',
      `Host: 127.0.0.1:${gw.port}`,
      'Connection: Upgrade',
      'Upgrade: websocket',
      'Sec-WebSocket-Version: 13',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      `Authorization: ${token}`,
      `authorization: Bearer ${await forged()}`,
      '',
      '',
    ].join('\r\n');
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(gw.port, '127.0.0.1', () => socket.write(head));
      let text = '';
      socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.match(answer, /\r\nx-portico-error: GW_AUTH_AMBIGUOUS\r\n/i);
    assert.ok(answer.endsWith('{"error":"Several Authorization headers","success":false}'), answer);
  });
});

describe('the verified-token cache belongs to one configuration', () => {
  it('a reload that changes the secret refuses a token accepted (and cached) just before', async () => {
    const backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    const yaml = (secret: string) => `
routes:
  - { method: GET, route: /private, service: ${backend.host}, path: /private }
config:
  auth: { secret: ${secret}, defaultProtected: true }
`;
    const gw = await startGateway(yaml(SECRET));
    try {
      const token = `Bearer ${await sign({ sub: 'u-1', exp: nowSec() + 600 })}`;
      for (let i = 0; i < 2; i++) {
        const res = await request(`${gw.url}/api/private`, { headers: { authorization: token } });
        assert.equal(res.statusCode, 200);
        await res.body.dump();
      }
      gw.reload(yaml('a-rotated-secret-0123456789abcdef0123456789'));
      const res = await request(`${gw.url}/api/private`, { headers: { authorization: token } });
      assert.equal(res.statusCode, 401);
      assert.equal(res.headers['x-portico-error'], 'GW_AUTH_INVALID');
      assert.deepEqual(await res.body.json(), { error: 'Invalid or expired token', success: false });
      assert.equal(backend.seen.length, 2);
    } finally {
      await closeAll(gw, backend);
    }
  });
});
