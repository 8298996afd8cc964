/**
 * One contract suite for the two JWT modes (`runAuthContract(make)`): local HMAC and
 * JWKS keys must accept and refuse the same tokens for the same reasons. No network: the JWKS
 * mode runs on an in-memory key set; the HTTP side is covered by test/integration/auth-*.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type JWTPayload } from 'jose';
import type { Logger } from '../observability/logger.js';
import type { Authenticator, AuthOutcome } from './types.js';
import { bearerToken, createJwtAuthenticator } from './jwt-authenticator.js';
import { createLocalJwtAuthenticator, HMAC_ALGORITHMS } from './local-jwt.js';
import { createJwksAuthenticator, createJwksKeySource, JwksUnavailableError, type RemoteKeySet } from './jwks.js';
import { captureLogger } from '../../test/support/capture-logger.js';

const NOW_SEC = 1_700_000_000;
const now = () => NOW_SEC * 1000;
const SECRET = 'a-test-secret-that-is-long-enough-for-hs512-000000';

/** Options of an authenticator that checks no issuer or audience and allows no clock skew. */
const noClaimChecks = (logger: Logger = captureLogger().logger) => ({
  issuer: undefined,
  audience: undefined,
  clockToleranceSec: 0,
  logger,
  now,
});

const request = (authorization?: string) =>
  ({ headers: authorization === undefined ? {} : { authorization } }) as unknown as IncomingMessage;

interface ModeOptions {
  issuer?: string | string[];
  audience?: string | string[];
  clockToleranceSec?: number;
}
interface Mode {
  authenticator: Authenticator;
  /** A token this mode accepts (given valid claims). */
  sign(payload: JWTPayload, alg?: string): Promise<string>;
  /** A token with a valid shape signed by a key this mode does not trust. */
  signWithOtherKey(payload: JWTPayload): Promise<string>;
  /** A token whose `alg` belongs to the other mode (algorithm confusion). */
  signConfused(payload: JWTPayload): Promise<string>;
}

function assertRefused(
  outcome: AuthOutcome,
  status: number,
  code: string,
): asserts outcome is AuthOutcome & { ok: false } {
  assert.equal(outcome.ok, false);
  if (outcome.ok) return;
  assert.equal(outcome.status, status);
  assert.equal(outcome.code, code);
  assert.equal(outcome.headers['content-type'], 'application/json');
  assert.equal(outcome.headers['x-portico-error'], code);
  assert.equal(outcome.headers['content-length'], String(outcome.body.length));
  const body = JSON.parse(outcome.body.toString()) as { success: boolean; error: string };
  assert.equal(body.success, false);
  assert.equal(typeof body.error, 'string');
}

function runJwtContract(name: string, make: (o: ModeOptions) => Promise<Mode>): void {
  describe(`JWT contract: ${name}`, () => {
    it('accepts a valid token and turns its string claims into X-<claim> headers', async () => {
      const m = await make({});
      const token = await m.sign({ sub: 'u1', role: 'admin', n: 5, exp: NOW_SEC + 60 });
      const outcome = await m.authenticator.authenticate(request(`Bearer ${token}`), 'r1');
      assert.deepEqual(outcome, {
        ok: true,
        claimHeaders: [
          ['X-sub', 'u1'],
          ['X-role', 'admin'],
        ],
        claims: { sub: 'u1', role: 'admin', n: 5, exp: NOW_SEC + 60 },
      });
    });

    it('accepts the scheme in any case and a token without exp', async () => {
      const m = await make({});
      const outcome = await m.authenticator.authenticate(request(`bearer ${await m.sign({ sub: 'u1' })}`), 'r1');
      assert.deepEqual(outcome, { ok: true, claimHeaders: [['X-sub', 'u1']], claims: { sub: 'u1' } });
    });

    it('no Authorization: 401 GW_AUTH_MISSING with a Bearer challenge', async () => {
      const outcome = await (await make({})).authenticator.authenticate(request(), 'r1');
      assertRefused(outcome, 401, 'GW_AUTH_MISSING');
      assert.deepEqual(JSON.parse(outcome.body.toString()), { error: 'Missing bearer token', success: false });
      assert.equal(outcome.headers['www-authenticate'], 'Bearer realm="portico"');
    });

    const malformed = [
      'Basic dXNlcjpwYXNz',
      'Bearer',
      'Bearer ',
      'Bearer a b',
      'Token abc.def.ghi',
      'Bearer abc.def.ghi',
      'Bearer not-a-jwt',
    ];
    for (const header of malformed) {
      it(`malformed Authorization ${JSON.stringify(header)}: 401 GW_AUTH_INVALID`, async () => {
        const outcome = await (await make({})).authenticator.authenticate(request(header), 'r1');
        assertRefused(outcome, 401, 'GW_AUTH_INVALID');
        assert.deepEqual(JSON.parse(outcome.body.toString()), { error: 'Invalid or expired token', success: false });
        assert.equal(outcome.headers['www-authenticate'], 'Bearer realm="portico", error="invalid_token"');
      });
    }

    const refusals: { name: string; options?: ModeOptions; token: (m: Mode) => Promise<string> }[] = [
      { name: 'a signature by another key', token: (m) => m.signWithOtherKey({ sub: 'u1' }) },
      {
        name: 'a tampered payload',
        token: async (m) => {
          const [h, , s] = (await m.sign({ role: 'user' })).split('.');
          return `${h}.${Buffer.from('{"role":"admin"}').toString('base64url')}.${s}`;
        },
      },
      { name: 'alg none', token: async () => new UnsecuredJWT({ sub: 'u1', role: 'admin' }).encode() },
      { name: 'an algorithm of the other mode (confusion)', token: (m) => m.signConfused({ sub: 'u1' }) },
      { name: 'expired (exp = now)', token: (m) => m.sign({ exp: NOW_SEC }) },
      {
        name: 'expired beyond the tolerance',
        options: { clockToleranceSec: 30 },
        token: (m) => m.sign({ exp: NOW_SEC - 31 }),
      },
      { name: 'not yet valid (nbf in the future)', token: (m) => m.sign({ nbf: NOW_SEC + 10 }) },
      {
        name: 'nbf beyond the tolerance',
        options: { clockToleranceSec: 30 },
        token: (m) => m.sign({ nbf: NOW_SEC + 31 }),
      },
      { name: 'issued in the future (iat > now)', token: (m) => m.sign({ iat: NOW_SEC + 1 }) },
      {
        name: 'iat beyond the tolerance',
        options: { clockToleranceSec: 30 },
        token: (m) => m.sign({ iat: NOW_SEC + 31 }),
      },
      {
        name: 'a wrong issuer',
        options: { issuer: 'https://idp.example' },
        token: (m) => m.sign({ iss: 'https://evil.example' }),
      },
      {
        name: 'no issuer when one is required',
        options: { issuer: 'https://idp.example' },
        token: (m) => m.sign({ sub: 'u1' }),
      },
      { name: 'a wrong audience', options: { audience: 'orders' }, token: (m) => m.sign({ aud: 'billing' }) },
      {
        name: 'an audience list without ours',
        options: { audience: ['orders', 'shop'] },
        token: (m) => m.sign({ aud: ['billing'] }),
      },
    ];
    for (const r of refusals) {
      it(`refuses ${r.name}: 401 GW_AUTH_INVALID`, async () => {
        const m = await make(r.options ?? {});
        const outcome = await m.authenticator.authenticate(request(`Bearer ${await r.token(m)}`), 'r1');
        assertRefused(outcome, 401, 'GW_AUTH_INVALID');
        assert.ok(outcome.detail, 'the reason is kept for logs');
      });
    }

    const accepted: { name: string; options: ModeOptions; payload: JWTPayload }[] = [
      { name: 'exp within the clock tolerance', options: { clockToleranceSec: 30 }, payload: { exp: NOW_SEC - 29 } },
      { name: 'nbf within the clock tolerance', options: { clockToleranceSec: 30 }, payload: { nbf: NOW_SEC + 29 } },
      { name: 'nbf = now', options: {}, payload: { nbf: NOW_SEC } },
      { name: 'iat = now', options: {}, payload: { iat: NOW_SEC } },
      { name: 'iat within the clock tolerance', options: { clockToleranceSec: 30 }, payload: { iat: NOW_SEC + 30 } },
      {
        name: 'the configured issuer',
        options: { issuer: 'https://idp.example' },
        payload: { iss: 'https://idp.example' },
      },
      {
        name: 'one of the configured issuers',
        options: { issuer: ['https://a.example', 'https://idp.example'] },
        payload: { iss: 'https://idp.example' },
      },
      {
        name: 'the configured audience within a list',
        options: { audience: 'orders' },
        payload: { aud: ['billing', 'orders'] },
      },
    ];
    for (const a of accepted) {
      it(`accepts ${a.name}`, async () => {
        const m = await make(a.options);
        const outcome = await m.authenticator.authenticate(
          request(`Bearer ${await m.sign({ ...a.payload, sub: 'u1' })}`),
          'r1',
        );
        assert.equal(outcome.ok, true, JSON.stringify(outcome));
      });
    }
  });
}

/** The RSA key of the confused tokens, made once: an RSA key pair takes hundreds of ms to make. */
let rsaKey: Promise<Awaited<ReturnType<typeof generateKeyPair>>['privateKey']> | undefined;

runJwtContract('local HMAC secret', async (o) => {
  const privateKey = await (rsaKey ??= generateKeyPair('RS256').then((k) => k.privateKey));
  const secret = new TextEncoder().encode(SECRET);
  const authenticator = createLocalJwtAuthenticator({
    secret: SECRET,
    issuer: o.issuer,
    audience: o.audience,
    clockToleranceSec: o.clockToleranceSec ?? 0,
    logger: captureLogger().logger,
    now,
  });
  return {
    authenticator,
    sign: (p, alg = 'HS256') => new SignJWT(p).setProtectedHeader({ alg }).sign(secret),
    signWithOtherKey: (p) =>
      new SignJWT(p).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(`${SECRET}-other`)),
    signConfused: (p) => new SignJWT(p).setProtectedHeader({ alg: 'RS256' }).sign(privateKey),
  };
});

runJwtContract('JWKS keys', async (o) => {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const other = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const set = { keys: [jwk] };
  const local = createLocalJWKSet(set);
  const remote: RemoteKeySet = Object.assign((...args: Parameters<typeof local>) => local(...args), {
    reload: async () => {},
    jwks: () => set,
  });
  const logger = captureLogger().logger;
  const source = createJwksKeySource({ remote, logger, url: 'http://jwks.test/keys', retryAfterFailureMs: 1000, now });
  const authenticator = createJwksAuthenticator({
    keys: source,
    issuer: o.issuer,
    audience: o.audience,
    clockToleranceSec: o.clockToleranceSec ?? 0,
    logger,
    now,
  });
  // Confusion: an HS256 token whose "secret" is the public key as the server publishes it.
  const publicBytes = new TextEncoder().encode(JSON.stringify(jwk));
  return {
    authenticator,
    sign: (p) => new SignJWT(p).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(privateKey),
    signWithOtherKey: (p) => new SignJWT(p).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(other.privateKey),
    signConfused: (p) => new SignJWT(p).setProtectedHeader({ alg: 'HS256', kid: 'k1' }).sign(publicBytes),
  };
});

describe('local HMAC mode', () => {
  for (const alg of ['HS256', 'HS384', 'HS512']) {
    it(`accepts ${alg}`, async () => {
      const a = createLocalJwtAuthenticator({ secret: SECRET, ...noClaimChecks() });
      const token = await new SignJWT({ sub: alg }).setProtectedHeader({ alg }).sign(new TextEncoder().encode(SECRET));
      assert.deepEqual(await a.authenticate(request(`Bearer ${token}`), 'r'), {
        ok: true,
        claimHeaders: [['X-sub', alg]],
        claims: { sub: alg },
      });
    });
  }

  it('warns at config load about a secret shorter than 32 bytes', () => {
    const { logger, lines } = captureLogger();
    createLocalJwtAuthenticator({ secret: 'short', ...noClaimChecks(logger) });
    logger.flush();
    assert.equal(lines.filter((l) => String(l.msg).includes('shorter than 32 bytes')).length, 1);
  });

  it('logs claims it skipped, with the request id', async () => {
    const { logger, lines } = captureLogger();
    const a = createLocalJwtAuthenticator({ secret: SECRET, ...noClaimChecks(logger) });
    const token = await new SignJWT({ sub: 'u1', role: 'x\r\ny' })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(SECRET));
    assert.deepEqual(await a.authenticate(request(`Bearer ${token}`), 'req-7'), {
      ok: true,
      claimHeaders: [['X-sub', 'u1']],
      claims: { sub: 'u1', role: 'x\r\ny' },
    });
    logger.flush();
    const warn = lines.find((l) => l.msg === 'auth: claims skipped, not valid as headers');
    assert.deepEqual(warn?.skipped, [{ claim: 'role', reason: 'value' }]);
    assert.equal(warn?.reqId, 'req-7');
  });
});

describe('verified-token cache', () => {
  const secret = new TextEncoder().encode(SECRET);
  const hs256 = (p: JWTPayload) => new SignJWT(p).setProtectedHeader({ alg: 'HS256' }).sign(secret);

  /** An HMAC authenticator on a hand-driven clock, counting verifications (one key lookup each). */
  function hmac(options: { clockToleranceSec?: number; cache?: false; failLookups?: number } = {}) {
    const clock = { ms: NOW_SEC * 1000 };
    const counter = { lookups: 0, failLookups: options.failLookups ?? 0 };
    const authenticator = createJwtAuthenticator({
      algorithms: HMAC_ALGORITHMS,
      getKey: async () => {
        counter.lookups++;
        if (counter.failLookups > 0) {
          counter.failLookups--;
          throw new JwksUnavailableError('keys unavailable in this test');
        }
        return secret;
      },
      issuer: undefined,
      audience: undefined,
      clockToleranceSec: options.clockToleranceSec ?? 0,
      logger: captureLogger().logger,
      isUnavailable: (err) => err instanceof JwksUnavailableError,
      now: () => clock.ms,
      ...(options.cache === false ? { tokenCache: false as const } : {}),
    });
    return { authenticator, clock, counter };
  }

  it('a hit skips verification; another token is verified', async () => {
    const { authenticator, counter } = hmac();
    const token = await hs256({ sub: 'u1', role: 'admin', exp: NOW_SEC + 60 });
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(await authenticator.authenticate(request(`Bearer ${token}`), 'r'), {
        ok: true,
        claimHeaders: [
          ['X-sub', 'u1'],
          ['X-role', 'admin'],
        ],
        claims: { sub: 'u1', role: 'admin', exp: NOW_SEC + 60 },
      });
    }
    assert.equal(counter.lookups, 1);
    await authenticator.authenticate(request(`bearer ${token}`), 'r');
    assert.equal(counter.lookups, 1, 'the same token under another scheme case is the same token');
    await authenticator.authenticate(request(`Bearer ${await hs256({ sub: 'u2' })}`), 'r');
    assert.equal(counter.lookups, 2);
  });

  it('answers a hit and a missing header without a promise; a miss and a bad token wait for verification', async () => {
    const { authenticator } = hmac();
    const token = await hs256({ sub: 'u1', exp: NOW_SEC + 60 });
    const first = authenticator.authenticate(request(`Bearer ${token}`), 'r');
    assert.ok(first instanceof Promise);
    assert.equal((await first).ok, true);
    for (const header of [`Bearer ${token}`, `bearer  ${token} `]) {
      const hit = authenticator.authenticate(request(header), 'r');
      assert.ok(!(hit instanceof Promise), header);
      assert.equal(hit.ok, true);
    }
    assert.ok(!(authenticator.authenticate(request(), 'r') instanceof Promise));
    const bad = authenticator.authenticate(request(`Bearer ${token.slice(0, -2)}xx`), 'r');
    assert.ok(bad instanceof Promise);
    assert.equal((await bad).ok, false);
  });

  for (const tolerance of [0, 5]) {
    it(`tolerance ${tolerance} s: a cached token expires at the same instant as an uncached one`, async () => {
      const cached = hmac({ clockToleranceSec: tolerance });
      const uncached = hmac({ clockToleranceSec: tolerance, cache: false });
      const exp = NOW_SEC + 60;
      const token = `Bearer ${await hs256({ sub: 'u1', exp })}`;
      assert.equal((await cached.authenticator.authenticate(request(token), 'r')).ok, true);
      const limit = (exp + tolerance) * 1000;
      for (const at of [limit - 1_001, limit - 1, limit, limit + 1, limit + 60_000]) {
        cached.clock.ms = uncached.clock.ms = at;
        const a = await cached.authenticator.authenticate(request(token), 'r');
        const b = await uncached.authenticator.authenticate(request(token), 'r');
        assert.equal(a.ok, b.ok, `at exp + tolerance ${at - limit} ms`);
        assert.equal(a.ok, at < limit);
        if (!a.ok) assert.equal(a.code, 'GW_AUTH_INVALID');
      }
      assert.equal(
        cached.counter.lookups,
        1 + 3,
        'hits before the limit; the expired token is verified (and refused) each time',
      );
    });
  }

  it('nbf is re-checked on a hit: a clock stepping back refuses the cached token as it would an uncached one', async () => {
    const { authenticator, clock } = hmac();
    const token = `Bearer ${await hs256({ sub: 'u1', nbf: NOW_SEC })}`;
    assert.equal((await authenticator.authenticate(request(token), 'r')).ok, true);
    clock.ms -= 1000;
    const outcome = await authenticator.authenticate(request(token), 'r');
    assert.equal(outcome.ok, false);
  });

  it('iat is re-checked on a hit: a clock stepping back before issuance refuses the cached token', async () => {
    const { authenticator, clock } = hmac();
    const token = `Bearer ${await hs256({ sub: 'u1', iat: NOW_SEC })}`;
    assert.equal((await authenticator.authenticate(request(token), 'r')).ok, true);
    clock.ms -= 1000;
    assert.equal((await authenticator.authenticate(request(token), 'r')).ok, false);
  });

  it('failures are not cached: a refused token is verified each time; an outage does not stick', async () => {
    const { authenticator, counter } = hmac({ failLookups: 1 });
    const token = `Bearer ${await hs256({ sub: 'u1' })}`;
    const first = await authenticator.authenticate(request(token), 'r');
    assert.equal(first.ok, false);
    if (!first.ok) assert.equal(first.code, 'GW_AUTH_UNAVAILABLE');
    assert.equal((await authenticator.authenticate(request(token), 'r')).ok, true);
    assert.equal(counter.lookups, 2);
    const expired = `Bearer ${await hs256({ sub: 'u1', exp: NOW_SEC - 1 })}`;
    for (let i = 0; i < 2; i++) assert.equal((await authenticator.authenticate(request(expired), 'r')).ok, false);
    assert.equal(counter.lookups, 4);
  });

  it('JWKS: a change of the key set (rotation) empties the cache; a refetch of the same keys does not', async () => {
    const k1 = await generateKeyPair('ES256', { extractable: true });
    const k2 = await generateKeyPair('ES256', { extractable: true });
    const jwk = async (pair: typeof k1, kid: string) => ({ ...(await exportJWK(pair.publicKey)), kid, alg: 'ES256' });
    const state = {
      serving: { keys: [await jwk(k1, 'k1')] },
      loaded: undefined as { keys: unknown[] } | undefined,
      fetches: 0,
      lookups: 0,
    };
    const fetchNow = async () => {
      state.fetches++;
      // A fresh object per fetch, as jose's key set cache holds.
      state.loaded = structuredClone(state.serving);
    };
    const lookup = async (...args: Parameters<RemoteKeySet>) => {
      state.lookups++;
      if (state.loaded === undefined) await fetchNow();
      try {
        return await createLocalJWKSet(state.loaded as never)(...args);
      } catch {
        await fetchNow();
        return createLocalJWKSet(state.loaded as never)(...args);
      }
    };
    const remote: RemoteKeySet = Object.assign(lookup, {
      reload: fetchNow,
      jwks: () => state.loaded as never,
      loadedKeys: () => state.loaded as never,
    });
    const source = createJwksKeySource({
      remote,
      logger: captureLogger().logger,
      url: 'http://jwks.test/keys',
      retryAfterFailureMs: 1000,
      now,
    });
    await source.prefetch();
    const authenticator = createJwksAuthenticator({ keys: source, ...noClaimChecks() });
    const sign = (pair: typeof k1, kid: string, p: JWTPayload) =>
      new SignJWT(p).setProtectedHeader({ alg: 'ES256', kid }).sign(pair.privateKey);
    const old = `Bearer ${await sign(k1, 'k1', { sub: 'old' })}`;

    assert.equal((await authenticator.authenticate(request(old), 'r')).ok, true);
    assert.equal((await authenticator.authenticate(request(old), 'r')).ok, true);
    assert.equal(state.lookups, 1, 'the second was a hit');

    // An unknown kid refetches the same keys: same content, the cache stays.
    assert.equal(
      (await authenticator.authenticate(request(`Bearer ${await sign(k2, 'k9', { sub: 'x' })}`), 'r')).ok,
      false,
    );
    assert.equal(state.fetches, 2);
    const versionBefore = source.version();
    assert.equal((await authenticator.authenticate(request(old), 'r')).ok, true);
    assert.equal(state.lookups, 2, 'still a hit after a refetch of identical keys');

    // Rotation: k1 withdrawn, k2 published; the first k2 token makes the source refetch.
    state.serving = { keys: [await jwk(k2, 'k2')] };
    assert.equal(
      (await authenticator.authenticate(request(`Bearer ${await sign(k2, 'k2', { sub: 'new' })}`), 'r')).ok,
      true,
    );
    assert.equal(source.version(), versionBefore + 1);
    const outcome = await authenticator.authenticate(request(old), 'r');
    assert.equal(outcome.ok, false, 'a token cached under the withdrawn key is verified again, and refused');
    assert.equal(state.lookups, 4);
  });
});

describe('bearerToken', () => {
  const cases: [string, string | undefined][] = [
    ['Bearer abc.def.ghi', 'abc.def.ghi'],
    ['bearer abc', 'abc'],
    ['BEARER  abc  ', 'abc'],
    ['Bearer abc==', 'abc=='],
    ['Bearer', undefined],
    ['Bearer a b', undefined],
    ['Basic abc', undefined],
    ['Bearer a\tb', undefined],
  ];
  for (const [header, token] of cases) it(JSON.stringify(header), () => assert.equal(bearerToken(header), token));
});
