/**
 * `portico token` as a user runs it: the token it prints is accepted by a running gateway on a
 * protected route (secret from --secret, $JWT_SECRET or the configuration's auth.secret, with the
 * configuration's issuer and audience), and it refuses what that gateway would refuse.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { runPortico } from '../support/cli-run.js';

const SECRET = 'cli-token-secret-0123456789abcdef0123456789';

function config(backendHost: string, auth: string): string {
  return `
routes:
  - { method: GET, route: /orders, service: "${backendHost}", path: /orders }
config:
  auth:
    defaultProtected: true
${auth}
`;
}

describe('portico token', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let dir: string;
  const auth = `    secret: ${SECRET}\n    issuer: https://idp.example\n    audience: portico-tests`;
  before(async () => {
    backend = await startBackend((req, res) =>
      json(res, 200, { sub: req.headers['x-sub'], role: req.headers['x-role'] }),
    );
    gw = await startGateway(config(backend.host, auth));
    dir = mkdtempSync(join(tmpdir(), 'portico-token-'));
    writeFileSync(join(dir, 'gateway.yaml'), config(backend.host, auth));
    writeFileSync(
      join(dir, 'jwks.yaml'),
      config(backend.host, '    jwksUrl: https://idp.example/.well-known/jwks.json'),
    );
    writeFileSync(join(dir, 'delegated.yaml'), config(backend.host, '    authService: auth.example:9000'));
    writeFileSync(
      join(dir, 'introspection.yaml'),
      config(
        backend.host,
        '    introspection: { url: "https://idp.example/introspect?tenant=t1", clientId: gw, clientSecret: s3cret-value }',
      ),
    );
    writeFileSync(
      join(dir, 'nosecret.yaml'),
      'routes:\n  - { method: GET, route: /a, service: "localhost:9", path: /a }\n',
    );
  });
  after(async () => {
    await gw?.close();
    await backend?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function call(token: string): Promise<{ status: number; body: unknown }> {
    const res = await request(`${gw.url}/api/orders`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.statusCode, body: await res.body.json() };
  }

  it("the token from the configuration's auth.secret is accepted, claims reach the backend", async () => {
    const r = await runPortico(['token', '--config', 'gateway.yaml', '--claim', 'sub=1', '--claim', 'role=admin'], {
      cwd: dir,
    });
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const token = r.stdout.trim();
    assert.deepEqual(await call(token), { status: 200, body: { sub: '1', role: 'admin' } });
    const claims = decodeJwt(token);
    assert.equal(claims.iss, 'https://idp.example');
    assert.equal(claims.aud, 'portico-tests');
    assert.equal(claims.exp! - claims.iat!, 3600, 'default lifetime 1h');
    assert.equal(decodeProtectedHeader(token).alg, 'HS256');
  });

  it('--secret with --alg HS512 and --exp 15m: accepted when iss and aud are given as claims', async () => {
    const r = await runPortico([
      'token',
      '--secret',
      SECRET,
      '--alg',
      'HS512',
      '--exp',
      '15m',
      '--claim',
      'sub=7',
      '--claim',
      'iss=https://idp.example',
      '--claim',
      'aud=portico-tests',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const token = r.stdout.trim();
    assert.equal(decodeProtectedHeader(token).alg, 'HS512');
    const claims = decodeJwt(token);
    assert.equal(claims.exp! - claims.iat!, 900);
    assert.deepEqual(await call(token), { status: 200, body: { sub: '7' } });
  });

  it('$JWT_SECRET is used when --secret is absent', async () => {
    const r = await runPortico(
      ['token', '--claim', 'sub=2', '--claim', 'iss=https://idp.example', '--claim', 'aud=portico-tests'],
      { cwd: dir, env: { JWT_SECRET: SECRET } },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await call(r.stdout.trim()), { status: 200, body: { sub: '2' } });
  });

  it('a secret under 32 bytes signs, with the warning portico check gives (stderr, the token alone on stdout)', async () => {
    const r = await runPortico(['token', '--secret', 'short', '--claim', 'sub=1'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    assert.match(r.stderr, /^portico: warning: the secret is shorter than 32 bytes \(5\)/);
    const long = await runPortico(['token', '--secret', SECRET, '--claim', 'sub=1'], { cwd: dir });
    assert.equal(long.stderr, '');
  });

  it('a token signed with another secret is refused by the gateway (the test can fail)', async () => {
    const r = await runPortico([
      'token',
      '--secret',
      'another-secret-0123456789abcdef0123456789',
      '--claim',
      'iss=https://idp.example',
      '--claim',
      'aud=portico-tests',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await call(r.stdout.trim())).status, 401);
  });

  for (const [file, what] of [
    [
      'jwks.yaml',
      /validates tokens with the identity provider whose keys are at https:\/\/idp\.example\/\.well-known\/jwks\.json: get a token from it/,
    ],
    ['delegated.yaml', /validates tokens with the auth service auth\.example:9000: get a token from it/],
    [
      'introspection.yaml',
      /validates tokens with the authorization server's introspection endpoint https:\/\/idp\.example\/introspect\?\*\*\*: get a token from it/,
    ],
  ] as const) {
    it(`a configuration with ${file.replace('.yaml', '')} sends the user to the identity provider, exit 2`, async () => {
      const r = await runPortico(['token', '--config', file, '--secret', SECRET], { cwd: dir });
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, what);
    });
  }

  it('no secret anywhere: says where one can come from, exit 2', async () => {
    const r = await runPortico(['token', '--config', 'nosecret.yaml'], { cwd: dir });
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'portico: nosecret.yaml has no auth.secret: give --secret S or set $JWT_SECRET\n');
  });

  it('refuses RS256, a malformed --exp and a claim without =, exit 2', async () => {
    const [alg, exp, claim] = await Promise.all([
      runPortico(['token', '--secret', SECRET, '--alg', 'RS256']),
      runPortico(['token', '--secret', SECRET, '--exp', 'tomorrow']),
      runPortico(['token', '--secret', SECRET, '--claim', 'admin']),
    ]);
    assert.deepEqual([alg.code, exp.code, claim.code], [2, 2, 2]);
    assert.match(alg.stderr, /^portico: --alg RS256: portico token signs HS256, HS384 or HS512 only/);
    assert.match(exp.stderr, /^portico: --exp "tomorrow": expected a number and a unit, e.g. 30s, 15m, 1h, 7d\n$/);
    assert.match(claim.stderr, /^portico: --claim "admin": expected NAME=VALUE/);
  });
});
