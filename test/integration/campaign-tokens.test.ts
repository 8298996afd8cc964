/**
 * JWT attack campaign through the real gateway (RFC 8725, "JSON Web Token Best Current Practices"),
 * in local-secret and JWKS modes, plus hostile claim values in local and delegated (auth service)
 * modes. Tokens are built by hand (node:crypto), so that every header and claim is exactly what an
 * attacker would send. Each family has a control: the same token made honest is accepted, so a
 * refusal below is the check at work, not a broken fixture.
 *
 * What must hold: a refused token gets a 4xx and never reaches the backend; no URL from a token
 * (jku, x5u) is ever fetched and no key from a token (jwk, kid as a path) is ever trusted; no
 * claim value becomes a second header line; no claim name reaches Object.prototype.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, sign as rsaSign, type KeyObject } from 'node:crypto';
import { request } from 'undici';
import { json, startBackend, type SeenRequest, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { rawConnect } from '../support/raw-http.js';
import { closeAll } from '../support/close-all.js';

const SECRET = 'campaign-secret-0123456789abcdef0123456789abcdef';
const AUDIENCE = 'portico-campaign';
const nowSec = () => Math.floor(Date.now() / 1000);
const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

type Header = Record<string, unknown>;
type Claims = Record<string, unknown>;

/** HMAC-signed JWT with exactly this header and payload (payload may be raw JSON text). */
function hs(header: Header, payload: Claims | string, secret: string | Buffer = SECRET): string {
  const input = `${b64(header)}.${b64(payload)}`;
  const hash = header.alg === 'HS384' ? 'sha384' : header.alg === 'HS512' ? 'sha512' : 'sha256';
  return `${input}.${createHmac(hash, secret).update(input).digest('base64url')}`;
}

/** RS256-signed JWT with exactly this header and payload. */
function rs(header: Header, payload: Claims | string, key: KeyObject): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${rsaSign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

/** An unsigned token (`alg: none` in the given spelling). */
function unsigned(alg: string, payload: Claims): string {
  return `${b64({ alg, typ: 'JWT' })}.${b64(payload)}.`;
}

const claims = (extra: Claims = {}): Claims => ({
  sub: 'u-1',
  aud: AUDIENCE,
  iat: nowSec(),
  exp: nowSec() + 300,
  ...extra,
});

function rawValues(seen: SeenRequest | undefined, name: string): string[] {
  const raw = seen?.rawHeaders ?? [];
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name.toLowerCase()) out.push(raw[i + 1]!);
  return out;
}

const routes = (host: string) => `
routes:
  - { method: GET, route: /orders, service: "${host}", path: /orders }`;

/** Object.prototype as it was before any hostile claim was processed. */
const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
function assertNoPrototypePollution(): void {
  assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeKeys);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(({} as Record<string, unknown>).isAdmin, undefined);
}

describe('JWT attack campaign', () => {
  let backend: TestBackend;
  /** Serves an attacker's JWKS and certificates; the gateway must never call it. */
  let trap: TestBackend;
  let idp: TestBackend;
  let local: TestGateway;
  let jwks: TestGateway;
  let jwksFetches = 0;
  const idpKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const attacker = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const KID = 'idp-key-1';
  const publicPem = idpKeys.publicKey.export({ type: 'spki', format: 'pem' }).toString();

  before(async () => {
    backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    trap = await startBackend((_req, res) =>
      json(res, 200, { keys: [{ ...attacker.publicKey.export({ format: 'jwk' }), kid: 'evil', alg: 'RS256' }] }),
    );
    idp = await startBackend((req, res) => {
      jwksFetches++;
      json(res, 200, {
        keys: [{ ...idpKeys.publicKey.export({ format: 'jwk' }), kid: KID, alg: 'RS256', use: 'sig' }],
      });
    });
    local = await startGateway(`${routes(backend.host)}
config:
  auth:
    secret: ${SECRET}
    audience: ${AUDIENCE}
    defaultProtected: true
`);
    jwks = await startGateway(`${routes(backend.host)}
config:
  auth:
    jwksUrl: ${idp.url}/jwks.json
    audience: ${AUDIENCE}
    defaultProtected: true
    clockToleranceSec: 30
    jwksCooldownSec: 60
`);
  });
  after(() => closeAll(local, jwks, backend, trap, idp));

  async function call(
    gw: TestGateway,
    authorization: string | undefined,
  ): Promise<{ status: number; body: unknown; wwwAuthenticate: unknown }> {
    const res = await request(`${gw.url}/api/orders`, {
      headers: authorization === undefined ? {} : { authorization },
    });
    return { status: res.statusCode, body: await res.body.json(), wwwAuthenticate: res.headers['www-authenticate'] };
  }

  /** The token is refused with 401 and the gateway's JSON error; the backend never sees the request. */
  async function refused(gw: TestGateway, token: string, why: string): Promise<void> {
    const seen = backend.seen.length;
    const r = await call(gw, `Bearer ${token}`);
    assert.equal(r.status, 401, `${why}: status`);
    assert.equal((r.body as { success?: unknown }).success, false, `${why}: gateway error body`);
    assert.equal(backend.seen.length, seen, `${why}: the backend must not be called`);
  }

  async function accepted(gw: TestGateway, token: string, why: string): Promise<void> {
    const r = await call(gw, `Bearer ${token}`);
    assert.equal(r.status, 200, `${why}: the honest token must pass (fixture check)`);
  }

  const signLocal = (header: Header, payload: Claims | string) => hs(header, payload);
  const signIdp = (header: Header, payload: Claims | string) =>
    rs({ kid: KID, ...header }, payload, idpKeys.privateKey);
  const modes = [
    { name: 'local secret', gw: () => local, alg: 'HS256', sign: signLocal },
    { name: 'JWKS', gw: () => jwks, alg: 'RS256', sign: signIdp },
  ] as const;

  for (const mode of modes) {
    describe(`${mode.name} mode`, () => {
      it('control: an honest token passes', () =>
        accepted(mode.gw(), mode.sign({ alg: mode.alg, typ: 'JWT' }, claims()), 'control'));

      it('alg none, in any spelling, signed or not, is refused', async () => {
        for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
          await refused(mode.gw(), unsigned(alg, claims()), `alg ${alg}`);
          // The same with the honest signature glued on: the header still says none.
          const honest = mode.sign({ alg: mode.alg }, claims()).split('.')[2]!;
          await refused(mode.gw(), `${unsigned(alg, claims())}${honest}`, `alg ${alg} with a signature`);
        }
      });

      it('an algorithm outside the mode is refused (HS in JWKS mode, RS in secret mode)', async () => {
        await refused(
          mode.gw(),
          mode.alg === 'HS256'
            ? rs({ alg: 'RS256' }, claims(), attacker.privateKey)
            : hs({ alg: 'HS256', kid: KID }, claims()),
          'foreign alg',
        );
      });

      it('crit naming an unknown extension is refused, though the signature is good', async () => {
        await refused(
          mode.gw(),
          mode.sign({ alg: mode.alg, crit: ['x-portico-unknown'], 'x-portico-unknown': true }, claims()),
          'crit unknown',
        );
        await refused(
          mode.gw(),
          mode.sign({ alg: mode.alg, crit: ['exp'] }, claims()),
          'crit naming a registered parameter',
        );
      });

      it('kid with path traversal or SQL-ish text is only an unknown key id', async () => {
        for (const kid of [
          '../../../../../../dev/null',
          "' OR '1'='1",
          'x"; DROP TABLE keys; --',
          '/etc/passwd',
          '\u0000',
        ]) {
          const forged = hs({ alg: 'HS256', kid }, claims(), kid === '../../../../../../dev/null' ? '' : kid);
          await refused(mode.gw(), forged, `kid ${JSON.stringify(kid)} HMAC`);
          await refused(
            mode.gw(),
            rs({ alg: 'RS256', kid }, claims(), attacker.privateKey),
            `kid ${JSON.stringify(kid)} RSA`,
          );
        }
      });

      it('jku, x5u and an embedded jwk are never fetched nor trusted', async () => {
        const trapCalls = trap.seen.length;
        const jwk = { ...attacker.publicKey.export({ format: 'jwk' }), kid: 'evil', alg: 'RS256' };
        await refused(
          mode.gw(),
          rs({ alg: 'RS256', kid: 'evil', jku: `${trap.url}/jwks.json` }, claims(), attacker.privateKey),
          'jku',
        );
        await refused(
          mode.gw(),
          rs({ alg: 'RS256', kid: 'evil', x5u: `${trap.url}/cert.pem` }, claims(), attacker.privateKey),
          'x5u',
        );
        await refused(mode.gw(), rs({ alg: 'RS256', jwk }, claims(), attacker.privateKey), 'embedded jwk');
        await refused(
          mode.gw(),
          rs({ alg: 'RS256', kid: KID, jwk }, claims(), attacker.privateKey),
          'embedded jwk with the trusted kid',
        );
        assert.equal(trap.seen.length, trapCalls, 'the gateway fetched a URL taken from a token');
      });

      it('time edges: exp == now is expired, nbf and iat in the future are refused', async () => {
        const tolerance = mode.name === 'JWKS' ? 30 : 0;
        // exp is exclusive (RFC 7519 4.1.4: "on or after" is expired); the tolerance moves the edge.
        await refused(
          mode.gw(),
          mode.sign({ alg: mode.alg }, claims({ exp: nowSec() - tolerance })),
          'exp == now - tolerance',
        );
        await refused(
          mode.gw(),
          mode.sign({ alg: mode.alg }, claims({ nbf: nowSec() + tolerance + 60 })),
          'nbf in the future',
        );
        await refused(
          mode.gw(),
          mode.sign({ alg: mode.alg }, claims({ iat: nowSec() + tolerance + 3600 })),
          'iat in the future',
        );
        await refused(
          mode.gw(),
          mode.sign({ alg: mode.alg }, claims({ exp: String(nowSec() + 300) })),
          'exp as a string',
        );
        await refused(mode.gw(), mode.sign({ alg: mode.alg }, claims({ aud: 'someone-else' })), 'wrong audience');
      });

      if (mode.name === 'JWKS') {
        it('clockToleranceSec: a token expired or not yet valid by less than the tolerance passes', async () => {
          await accepted(
            jwks,
            signIdp({ alg: 'RS256' }, claims({ exp: nowSec() - 10 })),
            'exp 10 s ago, tolerance 30 s',
          );
          await accepted(
            jwks,
            signIdp({ alg: 'RS256' }, claims({ nbf: nowSec() + 10, iat: nowSec() + 10 })),
            'nbf and iat 10 s ahead, tolerance 30 s',
          );
        });

        it('HS256 signed with the RSA public key (PEM or its bytes) is refused: key confusion', async () => {
          await refused(jwks, hs({ alg: 'HS256', kid: KID }, claims(), publicPem), 'HS256 with the PEM');
          await refused(
            jwks,
            hs({ alg: 'HS256', kid: KID }, claims(), idpKeys.publicKey.export({ type: 'spki', format: 'der' })),
            'HS256 with the DER',
          );
        });

        it('a flood of unknown kids costs at most one JWKS refetch per cooldown', async () => {
          const before = jwksFetches;
          for (let i = 0; i < 20; i++)
            await refused(jwks, rs({ alg: 'RS256', kid: `random-${i}` }, claims(), attacker.privateKey), 'random kid');
          assert.ok(jwksFetches - before <= 1, `${jwksFetches - before} JWKS fetches for 20 unknown kids`);
        });
      } else {
        it('time edges with no tolerance: expired one second ago is refused, valid for one more second passes', async () => {
          await refused(local, signLocal({ alg: 'HS256' }, claims({ exp: nowSec() - 1 })), 'exp a second ago');
          await accepted(
            local,
            signLocal({ alg: 'HS256' }, claims({ exp: nowSec() + 2, iat: nowSec() })),
            'exp in two seconds',
          );
        });
      }

      it('tokens of 100 KB get 431 (head too large) or 401, and the gateway keeps serving', async () => {
        const huge = mode.sign({ alg: mode.alg }, claims({ pad: 'x'.repeat(100 * 1024) }));
        const conn = await rawConnect(mode.gw().port);
        try {
          conn.write(`GET /api/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${huge}\r\n\r\n`);
          const res = await conn.next();
          assert.ok(res.status === 431 || res.status === 401, `status ${res.status}`);
        } finally {
          conn.close();
        }
        // Just under the head limit: parsed, verified, refused or accepted, but never a crash.
        const big = `${'e'.repeat(12 * 1024)}.${'e'.repeat(10)}.${'e'.repeat(10)}`;
        await refused(mode.gw(), big, '12 KB garbage token');
        await accepted(mode.gw(), mode.sign({ alg: mode.alg }, claims()), 'after the big tokens');
      });

      it('Bearer casing and spaces: any case and extra spaces pass; other shapes are refused', async () => {
        const token = mode.sign({ alg: mode.alg }, claims());
        for (const header of [`bearer ${token}`, `BEARER ${token}`, `Bearer   ${token}`, `Bearer ${token}   `]) {
          assert.equal((await call(mode.gw(), header)).status, 200, JSON.stringify(header.replace(token, 'T')));
        }
        for (const header of [
          `Bearer\t${token}`,
          `Bearer${token}`,
          `Basic ${token}`,
          `Bearer ${token} ${token}`,
          `Bearer ${token},Bearer ${token}`,
          'Bearer',
          `Token ${token}`,
        ]) {
          const seen = backend.seen.length;
          const r = await call(mode.gw(), header);
          assert.equal(r.status, 401, JSON.stringify(header.replaceAll(token, 'T')));
          assert.equal(backend.seen.length, seen);
        }
      });

      it('several Authorization headers are refused before validation (400), never forwarded', async () => {
        const token = mode.sign({ alg: mode.alg }, claims());
        const seen = backend.seen.length;
        for (const second of [`Bearer ${token}`, 'Bearer forged', '']) {
          const conn = await rawConnect(mode.gw().port);
          try {
            conn.write(
              `GET /api/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nauthorization: ${second}\r\n\r\n`,
            );
            const res = await conn.next();
            assert.equal(res.status, 400, `second header ${JSON.stringify(second.replace(token, 'T'))}`);
            assert.match(res.body, /"success":false/);
          } finally {
            conn.close();
          }
        }
        assert.equal(backend.seen.length, seen);
      });

      it('hostile claim values: no header injection, no prototype pollution, the request still passes', async () => {
        const payload =
          `{"sub":"u-1","aud":"${AUDIENCE}","exp":${nowSec() + 300},` +
          '"crlf":"a\\r\\nX-Injected: crlf","lf":"a\\nX-Injected: lf","nul":"a\\u0000b",' +
          '"unicodeCrlf":"a\\u010d\\u010aX-Injected: latin1","nonAscii":"Zo\\u00eb","cjk":"\\u65e5\\u672c","emoji":"\\ud83d\\ude00",' +
          `"long":"${'y'.repeat(5000)}",` +
          '"__proto__":{"polluted":"yes","isAdmin":true},"constructor":{"prototype":{"polluted":"yes"}},"prototype":"p",' +
          '"bad name":"v","X-Evil:1":"v","Request-ID":"forged","Forwarded-For":"6.6.6.6","role":"reader","Role":"admin"}';
        const before = backend.seen.length;
        const r = await call(mode.gw(), `Bearer ${mode.sign({ alg: mode.alg }, payload)}`);
        assert.equal(r.status, 200);
        assert.equal(backend.seen.length, before + 1);
        const seen = backend.seen.at(-1)!;
        assert.deepEqual(rawValues(seen, 'x-injected'), []);
        for (const name of [
          'x-crlf',
          'x-lf',
          'x-nul',
          'x-unicodeCrlf',
          'x-cjk',
          'x-emoji',
          'x-long',
          'x-bad name',
          'x-__proto__',
          'x-constructor',
        ]) {
          assert.deepEqual(rawValues(seen, name), [], `${name} must not be sent`);
        }
        assert.deepEqual(rawValues(seen, 'x-sub'), ['u-1']);
        assert.deepEqual(rawValues(seen, 'x-prototype'), ['p']);
        assert.deepEqual(rawValues(seen, 'x-role'), ['reader'], 'one value per name, the first claim wins');
        assert.equal(rawValues(seen, 'x-request-id').length, 1);
        assert.notEqual(rawValues(seen, 'x-request-id')[0], 'forged');
        assert.deepEqual(rawValues(seen, 'x-forwarded-for'), ['127.0.0.1']);
        // Latin-1 text is a valid header value; it arrives as the same bytes (Node reads them as Latin-1).
        assert.deepEqual(rawValues(seen, 'x-nonAscii'), ['Zo\u00eb']);
        assertNoPrototypePollution();
      });
    });
  }
});

describe('hostile claims from an auth service (delegated mode)', () => {
  let backend: TestBackend;
  let authService: TestBackend;
  let gw: TestGateway;
  let answer = '{}';
  before(async () => {
    backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    authService = await startBackend((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer);
    });
    gw = await startGateway(`${routes(backend.host)}
config:
  auth:
    authService: ${authService.host}
    defaultProtected: true
`);
  });
  after(() => closeAll(gw, authService, backend));

  it('control: a plain claim becomes its header', async () => {
    answer = '{"userId":"42"}';
    const res = await request(`${gw.url}/api/orders`, { headers: { authorization: 'Bearer t' } });
    assert.equal(res.statusCode, 200);
    await res.body.dump();
    assert.deepEqual(rawValues(backend.seen.at(-1), 'x-userId'), ['42']);
  });

  it('CRLF, Latin-1 folding, very long and __proto__ claims: no injection, no pollution', async () => {
    answer =
      '{"userId":"7","crlf":"a\\r\\nX-Injected: 1","unicodeCrlf":"a\\u010d\\u010aX-Injected: 2",' +
      `"long":"${'z'.repeat(100_000)}","__proto__":{"polluted":"yes","isAdmin":true},` +
      '"constructor":{"prototype":{"polluted":"yes"}},"X-Evil\\r\\nInjected":"v","Forwarded-For":"6.6.6.6"}';
    const before = backend.seen.length;
    const res = await request(`${gw.url}/api/orders`, { headers: { authorization: 'Bearer t' } });
    assert.equal(res.statusCode, 200);
    await res.body.dump();
    assert.equal(backend.seen.length, before + 1);
    const seen = backend.seen.at(-1)!;
    assert.deepEqual(rawValues(seen, 'x-userId'), ['7']);
    assert.deepEqual(rawValues(seen, 'x-injected'), []);
    assert.deepEqual(rawValues(seen, 'injected'), []);
    for (const name of ['x-crlf', 'x-unicodeCrlf', 'x-long', 'x-__proto__', 'x-constructor'])
      assert.deepEqual(rawValues(seen, name), [], name);
    assert.deepEqual(rawValues(seen, 'x-forwarded-for'), ['127.0.0.1']);
    assertNoPrototypePollution();
  });
});
