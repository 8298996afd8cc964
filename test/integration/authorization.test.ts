/**
 * Authorization rules (`require:` on a route, `protected: true`, `auth.rolesClaim`) end to end, in
 * each way tokens are validated: local HS256, JWKS (a real local key endpoint) and a delegated auth
 * service (its JSON answer is the claims). 401 without a valid token, 403 with a valid token that
 * lacks what the route requires, 200 otherwise; a refused request never reaches the backend. The
 * WebSocket upgrade obeys the same rules.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { handshakeHeaders, startWsBackend, upgradeRequest, type WsBackend } from '../support/ws-backend.js';
import { loadConfigText } from '../../src/config/load.js';
import { formatProblem } from '../../src/config/problems.js';
import { closeAll } from '../support/close-all.js';
import { hs256Signer } from '../support/tokens.js';

const SECRET = 'authorization-test-secret-0123456789abcdef';

const routes = (host: string) => `
routes:
  - { method: GET, route: /admin, service: ${host}, path: /admin, require: { roles: [admin] } }
  - { method: GET, route: /orders, service: ${host}, path: /orders,
      require: { scopes: [orders:read], claims: { tenant: acme } } }
  - { method: GET, route: /me, service: ${host}, path: /me, protected: true }
  - method: GET
    route: /catalog
    service: ${host}
    path: /catalog`;

type Sign = (claims: JWTPayload) => Promise<string>;

/** A token the local mode accepts: HS256 with the test secret, valid for five minutes. */
const signHs256: Sign = hs256Signer(SECRET, { expiresIn: '5m' });

/** The same expectations for every mode: `sign` makes a token the mode accepts. */
function authorizationCases(mode: string, setup: () => Promise<{ gw: TestGateway; backend: TestBackend; sign: Sign }>) {
  describe(`require: in ${mode} mode`, () => {
    let gw: TestGateway;
    let backend: TestBackend;
    let sign: Sign;
    before(async () => {
      ({ gw, backend, sign } = await setup());
    });
    after(() => closeAll(gw, backend));
    const call = async (path: string, claims?: JWTPayload, raw?: string) => {
      const token = raw ?? (claims === undefined ? undefined : await sign(claims));
      return gw.get(`/api${path}`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
    };

    it('roles: 200 with the role, 403 without it, 401 without a valid token', async () => {
      const admin = () => backend.seen.filter((r) => r.url === '/admin').length;
      const before = admin();
      assert.equal((await call('/admin', { sub: 'a', roles: ['user', 'admin'] })).status, 200);
      const denied = await call('/admin', { sub: 'b', roles: ['user'] });
      assert.equal(denied.status, 403);
      assert.equal(denied.headers['x-portico-error'], 'GW_AUTH_FORBIDDEN');
      assert.deepEqual(denied.json(), { error: 'The token does not grant access to this route', success: false });
      assert.equal((await call('/admin')).status, 401);
      assert.equal((await call('/admin', undefined, 'not-a-valid-token')).status, 401);
      assert.equal(admin() - before, 1, 'only the allowed request reached the backend');
    });

    it('scopes and claims together', async () => {
      assert.equal((await call('/orders', { sub: 'a', scope: 'openid orders:read', tenant: 'acme' })).status, 200);
      assert.equal((await call('/orders', { sub: 'a', scope: 'openid', tenant: 'acme' })).status, 403);
      assert.equal((await call('/orders', { sub: 'a', scope: 'orders:read', tenant: 'other' })).status, 403);
    });

    it('protected: true asks for a token on a route defaultProtected leaves public', async () => {
      assert.equal((await call('/me')).status, 401);
      assert.equal((await call('/me', { sub: 'a' })).status, 200);
      assert.equal((await call('/catalog')).status, 200);
    });

    it('the refusal is logged with the failing rule, never sent to the client', async () => {
      const denied = await call('/admin', { sub: 'c', roles: ['user'] });
      const id = denied.headers['x-request-id'];
      const line = gw.logs.find((l) => l.msg === 'auth refused' && l.reqId === id);
      assert.equal(line?.outcome, 'forbidden');
      assert.equal(line?.detail, 'no role among admin');
      assert.ok(!denied.text.includes('admin'), 'the body does not say which role was missing');
    });
  });
}

authorizationCases('local HS256', async () => {
  const backend = await startBackend((req, res) => json(res, 200, { path: req.url }));
  const gw = await startGateway(`${routes(backend.host)}
config:
  auth:
    secret: ${SECRET}
`);
  const sign: Sign = (claims) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(SECRET));
  return { gw, backend, sign };
});

authorizationCases('JWKS', async () => {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const backend = await startBackend((req, res) => {
    if (req.url === '/.well-known/jwks.json') return json(res, 200, { keys: [jwk] });
    json(res, 200, { path: req.url });
  });
  const gw = await startGateway(`${routes(backend.host)}
config:
  auth:
    jwksUrl: ${backend.url}/.well-known/jwks.json
`);
  const sign: Sign = (claims) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setExpirationTime('5m').sign(privateKey);
  return { gw, backend, sign };
});

authorizationCases('delegated auth service', async () => {
  const backend = await startBackend((req, res) => json(res, 200, { path: req.url }));
  // The auth service answers 200 with the claims carried in the token (base64url JSON), 401 otherwise.
  const authService = await startBackend((req, res) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    try {
      const claims = JSON.parse(Buffer.from(token ?? '', 'base64url').toString('utf8')) as unknown;
      if (typeof claims === 'object' && claims !== null) return json(res, 200, claims);
    } catch {
      // not a token this service issued
    }
    json(res, 401, { error: 'Unknown token', success: false });
  });
  const gw = await startGateway(`${routes(backend.host)}
config:
  auth:
    authService: ${authService.host}
`);
  const sign: Sign = async (claims) => Buffer.from(JSON.stringify(claims)).toString('base64url');
  const close = gw.close.bind(gw);
  return { gw: { ...gw, close: async () => (await close(), await authService.close()) }, backend, sign };
});

describe('require: on a WebSocket route and auth.rolesClaim', () => {
  let backend: WsBackend;
  let gw: TestGateway;
  const sign = signHs256;
  before(async () => {
    backend = await startWsBackend();
    gw = await startGateway(`
routes:
  - { method: GET, route: /live, service: ${backend.host}, path: /echo, isWebSocket: true, require: { roles: [ops] } }
config:
  auth:
    secret: ${SECRET}
    rolesClaim: realm_access.roles
`);
  });
  after(() => closeAll(gw, backend));

  it('an upgrade with the role (in the nested claim) is tunnelled; without it, 403 before the backend', async () => {
    const upgrades = backend.upgrades.length;
    const denied = await upgradeRequest(
      gw.url,
      '/api/live',
      handshakeHeaders({ authorization: `Bearer ${await sign({ realm_access: { roles: ['dev'] } })}` }),
    );
    assert.equal(denied.kind, 'response');
    assert.equal(denied.status, 403);
    assert.equal(backend.upgrades.length, upgrades, 'the backend saw no upgrade');
    const allowed = await upgradeRequest(
      gw.url,
      '/api/live',
      handshakeHeaders({ authorization: `Bearer ${await sign({ realm_access: { roles: ['ops'] } })}` }),
    );
    assert.equal(allowed.kind, 'upgrade');
    assert.equal(allowed.status, 101);
    if (allowed.kind === 'upgrade') allowed.socket.destroy();
  });
});

describe('portico check: the per-route auth keys', () => {
  const check = (yaml: string) => {
    const r = loadConfigText(yaml, 'gw.yaml', {});
    return r.ok ? [] : r.problems.map(formatProblem);
  };
  const route = (extra: string) => `routes:
  - method: GET
    route: /a
    service: localhost:3000
    path: /a
${extra}`;

  it('require without a way to validate tokens, at its line', () => {
    assert.deepEqual(check(route('    require: { roles: [admin] }')), [
      'gw.yaml:6:14: routes[0].require: the route needs a valid token, but no config.auth.secret, jwksUrl, authService, introspection or apiKey is set to authenticate requests',
    ]);
  });

  it('public with protected or require', () => {
    const auth = `config:\n  auth: { secret: ${SECRET} }\n`;
    assert.deepEqual(check(route('    public: true\n    protected: true\n') + auth), [
      'gw.yaml:7:16: routes[0]: public: true and protected: true contradict each other',
    ]);
    assert.deepEqual(check(route('    public: true\n    require: { roles: [a] }\n') + auth), [
      'gw.yaml:7:14: routes[0].require: a public route has no token to check; remove public: true',
    ]);
    assert.deepEqual(check(route('    protected: false\n    require: { roles: [a] }\n') + auth), [
      'gw.yaml:7:14: routes[0].require: needs a token, but the route says protected: false',
    ]);
  });

  it('an unknown rule, an empty list and a wrong value type', () => {
    const auth = `config:\n  auth: { secret: ${SECRET} }\n`;
    const problems = check(route('    require: { role: [admin], scopes: [], claims: { tenant: { a: 1 } } }\n') + auth);
    assert.equal(problems.length, 3, problems.join('\n'));
    assert.match(problems.join('\n'), /role.*roles/s, 'did-you-mean for the misspelt key');
  });
});

describe('auth.tokenFrom: a cookie or a query parameter', () => {
  let backend: TestBackend;
  let authService: TestBackend;
  let local: TestGateway;
  let delegated: TestGateway;
  const token = signHs256;
  const yaml = (auth: string) => `
routes:
  - { method: GET, route: /feed, service: ${backend.host}, path: /feed, protected: true }
config:
  auth:
${auth}
    tokenFrom: [header, { cookie: session }, { query: access_token }]
`;
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, { url: req.url }));
    authService = await startBackend((req, res) =>
      req.headers.authorization === 'Bearer good'
        ? json(res, 200, { sub: 'u1' })
        : json(res, 401, { error: 'no', success: false }),
    );
    local = await startGateway(yaml(`    secret: ${SECRET}`));
    delegated = await startGateway(yaml(`    authService: ${authService.host}`));
  });
  after(async () => {
    await Promise.all([local.close(), delegated.close(), backend.close(), authService.close()]);
  });

  it('a token in the cookie is accepted; without any token, 401', async () => {
    const t = await token({ sub: 'c1' });
    const ok = await local.get('/api/feed', { headers: { cookie: `theme=dark; session=${t}` } });
    assert.equal(ok.status, 200);
    assert.equal(backend.seen.at(-1)?.headers['x-sub'], 'c1');
    assert.equal((await local.get('/api/feed', { headers: { cookie: 'theme=dark' } })).status, 401);
    assert.equal((await local.get('/api/feed', { headers: { cookie: 'session=forged' } })).status, 401);
  });

  it('a token in the query is accepted and never reaches the backend or the access log', async () => {
    const t = await token({ sub: 'q1' });
    const ok = await local.get(`/api/feed?page=2&access_token=${t}&sort=asc`);
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json(), { url: '/feed?page=2&sort=asc' });
    assert.equal(backend.seen.at(-1)?.headers['x-sub'], 'q1');
    const line = local.logs.find((l) => l.msg === 'request' && l.reqId === ok.headers['x-request-id']);
    assert.ok(line !== undefined, 'the request was logged');
    assert.ok(!JSON.stringify(local.logs).includes(t), 'no log line holds the token');
  });

  it('delegated mode: the auth service gets the token as a bearer and a URL without it', async () => {
    const ok = await delegated.get('/api/feed?access_token=good&x=1');
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json(), { url: '/feed?x=1' });
    const fromCookie = await delegated.get('/api/feed', { headers: { cookie: 'session=good' } });
    assert.equal(fromCookie.status, 200);
    const uris = authService.seen.map((r) => r.headers['x-forwarded-uri']);
    assert.deepEqual(uris.slice(0, 2), ['/api/feed?x=1', '/api/feed'], 'the auth service never saw the query token');
    assert.equal((await delegated.get('/api/feed?access_token=bad')).status, 401);
  });

  it('is refused 400 GW_AUTH_TOKEN_REPEATED and never forwarded, whichever of the two is valid', async () => {
    const valid = await signHs256({ sub: 'alice' });
    const seen = backend.seen.length;
    const requests: { path: string; headers: Record<string, string> }[] = [
      { path: '/api/feed', headers: { cookie: `session=${valid}; session=forged` } },
      { path: '/api/feed', headers: { cookie: `session=forged; theme=dark; session=${valid}` } },
      { path: `/api/feed?access_token=${valid}&access_token=forged`, headers: {} },
      // The header is the token used; a repeated cookie would still reach a backend that reads it.
      { path: '/api/feed', headers: { authorization: `Bearer ${valid}`, cookie: 'session=a; session=b' } },
    ];
    for (const r of requests) {
      const res = await local.get(r.path, { headers: r.headers });
      assert.equal(res.status, 400, JSON.stringify(r));
      assert.equal(res.headers['x-portico-error'], 'GW_AUTH_TOKEN_REPEATED');
    }
    assert.equal(backend.seen.length, seen);
    assert.equal((await local.get('/api/feed', { headers: { cookie: `session=${valid}` } })).status, 200);
  });
});

describe('auth.tokenFrom without the header: a forged Authorization beside a valid token', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  const token = signHs256;
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, { url: req.url }));
    gw = await startGateway(`
routes:
  - { method: GET, route: /feed, service: ${backend.host}, path: /feed, protected: true }
config:
  auth: { secret: ${SECRET}, tokenFrom: [{ cookie: session }, { query: access_token }] }
`);
  });
  after(async () => {
    await Promise.all([gw.close(), backend.close()]);
  });

  it('never reaches the backend: it sees the verified cookie or nothing, and the claims of the valid token', async () => {
    const valid = await token({ sub: 'alice' });
    const forged = `Bearer ${await token({ sub: 'root' })}x`;
    const viaCookie = await gw.get('/api/feed', { headers: { cookie: `session=${valid}`, authorization: forged } });
    assert.equal(viaCookie.status, 200);
    assert.equal(backend.seen.at(-1)?.headers.authorization, undefined);
    assert.equal(backend.seen.at(-1)?.headers['x-sub'], 'alice');
    const viaQuery = await gw.get(`/api/feed?access_token=${valid}`, { headers: { authorization: forged } });
    assert.equal(viaQuery.status, 200);
    assert.equal(backend.seen.at(-1)?.headers.authorization, undefined);
    assert.deepEqual(viaQuery.json(), { url: '/feed' });
  });
});
