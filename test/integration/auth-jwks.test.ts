/**
 * JWKS mode (`config.auth.jwksUrl`) with a real local JWKS endpoint and real key pairs: several
 * algorithms, algorithm confusion, key rotation without restart, refetch rate limiting, and an
 * endpoint that is down when the gateway starts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import { closedPort, json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import type { GetOptions } from '../support/http.js';
import { createManualClock } from '../support/manual-clock.js';
import { waitFor } from '../support/wait-for.js';
import { closeAll } from '../support/close-all.js';

interface SigningKey {
  kid: string;
  alg: string;
  jwk: JWK;
  sign(claims: JWTPayload): Promise<string>;
}

async function signingKey(kid: string, alg: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg === 'EdDSA' ? 'Ed25519' : alg, { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, jwk, sign: (claims) => new SignJWT(claims).setProtectedHeader({ alg, kid }).sign(privateKey) };
}

/** A JWKS endpoint whose key set and availability tests change; counts the fetches it answers. */
async function startJwksServer(keys: SigningKey[]) {
  const state = { keys, up: true, fetches: 0, connections: 0 };
  const server = await startBackend((req, res) => {
    if (req.url !== '/.well-known/jwks.json') return json(res, 404, { error: 'not found' });
    state.fetches++;
    if (!state.up) return json(res, 503, { error: 'down' });
    json(res, 200, { keys: state.keys.map((k) => k.jwk) });
  });
  server.server.on('connection', () => state.connections++);
  return { server, state, url: `${server.url}/.well-known/jwks.json` };
}

const routes = (host: string) => `
routes:
  - { method: GET, route: /orders, service: ${host}, path: /orders }
  - method: GET
    route: /catalog
    service: ${host}
    path: /catalog
    public: true`;

/** Request options carrying `token` as a bearer token; none without one. */
function bearer(token?: string): GetOptions {
  return token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } };
}

describe('JWKS mode', () => {
  let backend: TestBackend;
  let jwks: Awaited<ReturnType<typeof startJwksServer>>;
  let gw: TestGateway;
  const keys: Record<string, SigningKey> = {};
  before(async () => {
    for (const alg of ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA']) keys[alg] = await signingKey(`k-${alg}`, alg);
    backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    jwks = await startJwksServer(Object.values(keys));
    gw = await startGateway(`${routes(backend.host)}
config:
  auth:
    jwksUrl: ${jwks.url}
    defaultProtected: true
    audience: portico-tests
    jwksCooldownSec: 0
    secret: ignored-because-jwksUrl-takes-priority-0123456789
`);
  });
  after(() => closeAll(gw, jwks?.server, backend));

  it('fetches the keys at start, once', async () => {
    await waitFor(() => jwks.state.fetches === 1);
    const res = await gw.get('/api/orders', bearer(await keys.RS256!.sign({ aud: 'portico-tests', sub: 'u-1' })));
    assert.equal(res.status, 200);
    assert.equal(jwks.state.fetches, 1, 'the first request used the prefetched keys');
  });

  for (const alg of ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA']) {
    it(`accepts ${alg} and forwards string claims`, async () => {
      const token = await keys[alg]!.sign({
        aud: 'portico-tests',
        sub: `u-${alg}`,
        role: 'reader',
        exp: Math.floor(Date.now() / 1000) + 60,
      });
      const res = await gw.get('/api/orders', bearer(token));
      assert.equal(res.status, 200);
      assert.deepEqual(res.json(), { ok: true });
      assert.equal(backend.seen.at(-1)?.headers['x-sub'], `u-${alg}`);
      assert.equal(backend.seen.at(-1)?.headers['x-role'], 'reader');
    });
  }

  it('refuses an HS256 token "signed" with the published public key (algorithm confusion): 401', async () => {
    const jwk = keys.RS256!.jwk;
    const forged = await new SignJWT({ aud: 'portico-tests', role: 'admin' })
      .setProtectedHeader({ alg: 'HS256', kid: jwk.kid! })
      .sign(new TextEncoder().encode(JSON.stringify(jwk)));
    const before = backend.seen.length;
    const res = await gw.get('/api/orders', bearer(forged));
    assert.equal(res.status, 401);
    assert.equal(res.headers['x-portico-error'], 'GW_AUTH_INVALID');
    assert.deepEqual(res.json(), { error: 'Invalid or expired token', success: false });
    assert.equal(backend.seen.length, before);
  });

  it('refuses a token signed by another key under a known kid, a wrong audience, and a missing token', async () => {
    const impostor = await signingKey('k-ES256', 'ES256');
    for (const token of [await impostor.sign({ aud: 'portico-tests' }), await keys.ES256!.sign({ aud: 'other' })]) {
      const res = await gw.get('/api/orders', bearer(token));
      assert.equal(res.status, 401);
      assert.deepEqual(res.json(), { error: 'Invalid or expired token', success: false });
    }
    const missing = await gw.get('/api/orders');
    assert.equal(missing.status, 401);
    assert.deepEqual(missing.json(), { error: 'Missing bearer token', success: false });
  });

  it('rotation: a token with a new kid is accepted once the endpoint publishes it, without restart', async () => {
    const rotated = await signingKey('k-2026', 'RS256');
    const token = await rotated.sign({ aud: 'portico-tests', sub: 'after-rotation' });
    const fetches = jwks.state.fetches;
    const connections = jwks.state.connections;
    const unknown = await gw.get('/api/orders', bearer(token));
    assert.equal(unknown.status, 401, 'not published yet');
    assert.equal(jwks.state.fetches, fetches + 1, 'an unknown kid triggers a refetch');
    jwks.state.keys = [...jwks.state.keys, rotated];
    const res = await gw.get('/api/orders', bearer(token));
    assert.equal(res.status, 200);
    assert.equal(backend.seen.at(-1)?.headers['x-sub'], 'after-rotation');
    assert.equal(jwks.state.fetches, fetches + 2);
    assert.ok(jwks.state.connections - connections <= 1, 'key fetches go through the keep-alive upstream pool');
  });

  it('jwksUrl takes priority over secret: an HS256 token with that secret is refused', async () => {
    const token = await new SignJWT({ aud: 'portico-tests' })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('ignored-because-jwksUrl-takes-priority-0123456789'));
    const res = await gw.get('/api/orders', bearer(token));
    assert.equal(res.status, 401);
    assert.deepEqual(res.json(), { error: 'Invalid or expired token', success: false });
  });

  it('public routes need no keys and no token', async () => {
    const res = await gw.get('/api/catalog');
    assert.equal(res.status, 200);
  });
});

describe('JWKS refetch is rate-limited by jwksCooldownSec', () => {
  it('unknown kids within the cooldown cause no fetch and are refused 401', async () => {
    const key = await signingKey('k1', 'ES256');
    const backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    const jwks = await startJwksServer([key]);
    const gw = await startGateway(`${routes(backend.host)}
config:
  auth: { jwksUrl: "${jwks.url}", defaultProtected: true }
`);
    try {
      await waitFor(() => jwks.state.fetches === 1);
      const stranger = await signingKey('k-unknown', 'ES256');
      for (let i = 0; i < 5; i++) {
        const res = await gw.get('/api/orders', bearer(await stranger.sign({ i })));
        assert.equal(res.status, 401);
      }
      assert.equal((await gw.get('/api/orders', bearer(await key.sign({ sub: 'u' })))).status, 200);
      assert.equal(jwks.state.fetches, 1, 'default cooldown (30 s): no refetch');
    } finally {
      await closeAll(gw, jwks.server, backend);
    }
  });
});

describe('JWKS endpoint down at start', () => {
  it('the gateway starts; protected routes answer 503 JSON until the keys load, public routes work', async () => {
    const key = await signingKey('k1', 'RS256');
    const backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    const jwks = await startJwksServer([key]);
    jwks.state.up = false;
    const clock = createManualClock();
    const gw = await startGateway(
      `${routes(backend.host)}
config:
  auth: { jwksUrl: "${jwks.url}", defaultProtected: true }
`,
      process.env,
      { now: clock.now },
    );
    try {
      await waitFor(() =>
        gw.logs.some((l) => l.msg === 'auth: JWKS endpoint unavailable; protected routes answer 503 until keys load'),
      );
      const token = await key.sign({ sub: 'u-1' });
      const down = await gw.get('/api/orders', bearer(token));
      assert.equal(down.status, 503);
      assert.equal(down.headers['content-type'], 'application/json');
      assert.equal(down.headers['x-portico-error'], 'GW_AUTH_UNAVAILABLE');
      assert.deepEqual(down.json(), { error: 'Authentication service unavailable', success: false });
      assert.equal((await gw.get('/api/catalog')).status, 200);
      const before = backend.seen.length;
      jwks.state.up = true;
      // A failed fetch is retried after a 1 s backoff: until then, no fetch and still 503.
      const fetches = jwks.state.fetches;
      clock.advance(999);
      assert.equal((await gw.get('/api/orders', bearer(token))).status, 503);
      assert.equal(jwks.state.fetches, fetches);
      clock.advance(1);
      const up = await gw.get('/api/orders', bearer(token));
      assert.equal(up.status, 200);
      assert.equal(backend.seen.length, before + 1);
      assert.ok(gw.logs.some((l) => l.msg === 'auth: JWKS keys loaded'));
    } finally {
      await closeAll(gw, jwks.server, backend);
    }
  });

  it('a JWKS URL where nothing listens: 503 at once, no crash', async () => {
    const port = await closedPort();
    const backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    const gw = await startGateway(`${routes(backend.host)}
config:
  auth: { jwksUrl: "http://127.0.0.1:${port}/jwks.json", defaultProtected: true }
`);
    try {
      const key = await signingKey('k1', 'RS256');
      const started = Date.now();
      const res = await gw.get('/api/orders', bearer(await key.sign({ sub: 'u' })));
      assert.equal(res.status, 503);
      assert.deepEqual(res.json(), { error: 'Authentication service unavailable', success: false });
      assert.ok(Date.now() - started < 2000);
      assert.equal(backend.seen.length, 0);
    } finally {
      await closeAll(gw, backend);
    }
  });
});

describe('JWKS keys survive a configuration reload (one key source per URL per process)', () => {
  it('same jwksUrl: no refetch on reload; while the endpoint is down the keys loaded before keep verifying', async () => {
    const key = await signingKey('k1', 'ES256');
    const backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    const jwks = await startJwksServer([key]);
    // The audience changes between reloads: the authenticator is rebuilt, the key source is not.
    const yaml = (audience: string) => `${routes(backend.host)}
config:
  auth:
    jwksUrl: ${jwks.url}
    jwksCooldownSec: 0
    defaultProtected: true
    audience: ${audience}
`;
    const gw = await startGateway(yaml('aud-1'));
    try {
      await waitFor(() => jwks.state.fetches === 1);
      assert.equal((await gw.get('/api/orders', bearer(await key.sign({ aud: 'aud-1', sub: 'before' })))).status, 200);

      gw.reload(yaml('aud-2'));
      const afterReload = await gw.get('/api/orders', bearer(await key.sign({ aud: 'aud-2', sub: 'after-1' })));
      assert.equal(afterReload.status, 200);
      assert.equal(backend.seen.at(-1)?.headers['x-sub'], 'after-1');
      assert.equal(jwks.state.fetches, 1, 'the reload fetched nothing');

      // The endpoint goes down, then a reload: the keys loaded before still verify.
      jwks.state.up = false;
      gw.reload(yaml('aud-3'));
      const whileDown = await gw.get('/api/orders', bearer(await key.sign({ aud: 'aud-3', sub: 'after-2' })));
      assert.equal(whileDown.status, 200);
      assert.equal(backend.seen.at(-1)?.headers['x-sub'], 'after-2');
      assert.equal(jwks.state.fetches, 1);

      // An unknown kid makes the source refetch, which fails: it now serves stale keys (stale-if-error).
      const stranger = await signingKey('k-unknown', 'ES256');
      const unknown = await gw.get('/api/orders', bearer(await stranger.sign({ aud: 'aud-3' })));
      assert.equal(unknown.status, 503);
      assert.equal(jwks.state.fetches, 2);
      gw.reload(yaml('aud-4'));
      const stale = await gw.get('/api/orders', bearer(await key.sign({ aud: 'aud-4', sub: 'after-3' })));
      assert.equal(stale.status, 200, 'stale keys are kept across the reload');
      assert.equal(backend.seen.at(-1)?.headers['x-sub'], 'after-3');
      assert.equal(jwks.state.fetches, 2, 'no fetch during the failure backoff, reload or not');
    } finally {
      await closeAll(gw, jwks.server, backend);
    }
  });

  it('a reload naming another jwksUrl fetches that URL once', async () => {
    const key = await signingKey('k1', 'RS256');
    const backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    const first = await startJwksServer([key]);
    const second = await startJwksServer([key]);
    const yaml = (url: string) => `${routes(backend.host)}
config:
  auth: { jwksUrl: "${url}", defaultProtected: true }
`;
    const gw = await startGateway(yaml(first.url));
    try {
      await waitFor(() => first.state.fetches === 1);
      gw.reload(yaml(second.url));
      await waitFor(() => second.state.fetches === 1);
      assert.equal((await gw.get('/api/orders', bearer(await key.sign({ sub: 'u' })))).status, 200);
      gw.reload(yaml(first.url));
      assert.equal((await gw.get('/api/orders', bearer(await key.sign({ sub: 'v' })))).status, 200);
      assert.equal(first.state.fetches, 1, 'back to the first URL: its keys were kept');
      assert.equal(second.state.fetches, 1);
    } finally {
      await closeAll(gw, first.server, second.server, backend);
    }
  });
});
