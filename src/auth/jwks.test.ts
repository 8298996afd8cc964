/**
 * The JWKS key source around a remote key set: failure backoff, stale-if-error and the split
 * between "endpoint unavailable" (503) and "token matches no key" (401). A fake remote set and an
 * injected clock stand in for the network and time; the real endpoint is in
 * test/integration/auth-jwks.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  createLocalJWKSet,
  errors,
  exportJWK,
  generateKeyPair,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type CompactJWSHeaderParameters,
} from 'jose';
import { createJwksKeySource, JwksUnavailableError, type RemoteKeySet } from './jwks.js';
import { captureLogger } from '../../test/support/capture-logger.js';

const TOKEN: FlattenedJWSInput = { payload: '', signature: '' };
const header = (kid: string): CompactJWSHeaderParameters => ({ alg: 'ES256', kid });

async function keySet(...kids: string[]): Promise<JSONWebKeySet> {
  const keys = await Promise.all(
    kids.map(async (kid) => ({
      ...(await exportJWK((await generateKeyPair('ES256', { extractable: true })).publicKey)),
      kid,
      alg: 'ES256',
    })),
  );
  return { keys };
}

/** Behaves like jose's remote set: fetches when it has no keys or the kid is unknown; counts fetches. */
function fakeRemote(initial: JSONWebKeySet) {
  const state = {
    up: false,
    serving: initial,
    loaded: undefined as JSONWebKeySet | undefined,
    fetches: 0,
    failWith: (): unknown => new TypeError('fetch failed'),
  };
  const fetchNow = async () => {
    state.fetches++;
    if (!state.up) throw state.failWith();
    state.loaded = state.serving;
  };
  const remote: RemoteKeySet = Object.assign(
    async (h: CompactJWSHeaderParameters, t: FlattenedJWSInput) => {
      if (state.loaded === undefined) await fetchNow();
      try {
        return await createLocalJWKSet(state.loaded!)(h, t);
      } catch (err) {
        if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
        await fetchNow();
        return createLocalJWKSet(state.loaded!)(h, t);
      }
    },
    { reload: fetchNow, jwks: () => state.loaded },
  );
  return { remote, state };
}

function setup(initial: JSONWebKeySet) {
  const clock = { ms: 1_000_000 };
  const { logger, lines } = captureLogger();
  const { remote, state } = fakeRemote(initial);
  const source = createJwksKeySource({
    remote,
    logger,
    url: 'http://idp.test/jwks',
    retryAfterFailureMs: 1000,
    now: () => clock.ms,
  });
  return { source, state, clock, lines };
}

describe('JWKS key source', () => {
  it('endpoint down at start: prefetch does not throw, requests get "unavailable" without refetching until the backoff ends', async () => {
    const { source, state, clock, lines } = setup(await keySet('k1'));
    await source.prefetch();
    assert.equal(state.fetches, 1);
    assert.equal(
      lines.filter((l) => l.msg === 'auth: JWKS endpoint unavailable; protected routes answer 503 until keys load')
        .length,
      1,
    );
    await assert.rejects(async () => source.getKey(header('k1'), TOKEN), JwksUnavailableError);
    await assert.rejects(async () => source.getKey(header('k1'), TOKEN), JwksUnavailableError);
    assert.equal(state.fetches, 1, 'no fetch during the backoff');
    clock.ms += 1000;
    await assert.rejects(async () => source.getKey(header('k1'), TOKEN), JwksUnavailableError);
    assert.equal(state.fetches, 2, 'one retry once the backoff is over');
    assert.equal(
      lines.filter((l) => String(l.msg).startsWith('auth: JWKS endpoint')).length,
      1,
      'one warning per failure streak',
    );
    state.up = true;
    clock.ms += 1000;
    const key = await source.getKey(header('k1'), TOKEN);
    assert.equal((key as { type: string }).type, 'public');
    assert.equal(state.fetches, 3);
    assert.equal(lines.filter((l) => l.msg === 'auth: JWKS keys loaded').length, 1);
  });

  it('prefetch loads the keys so the first request does not fetch', async () => {
    const { source, state } = setup(await keySet('k1'));
    state.up = true;
    await source.prefetch();
    await source.getKey(header('k1'), TOKEN);
    assert.equal(state.fetches, 1);
  });

  it("a token naming no key is the token's fault (JWKSNoMatchingKey), and starts no backoff", async () => {
    const { source, state } = setup(await keySet('k1'));
    state.up = true;
    await source.prefetch();
    await assert.rejects(async () => source.getKey(header('nope'), TOKEN), errors.JWKSNoMatchingKey);
    await assert.rejects(async () => source.getKey(header('nope'), TOKEN), errors.JWKSNoMatchingKey);
    assert.equal(state.fetches, 3, 'the fake refetches per unknown kid (jose rate-limits with its cooldown)');
  });

  it('stale-if-error: keys loaded before keep verifying while the endpoint fails; an unknown kid is "unavailable"', async () => {
    const { source, state, clock } = setup(await keySet('k1'));
    state.up = true;
    await source.prefetch();
    state.up = false;
    // An unknown kid triggers a fetch, which fails: we cannot tell whether the key rotated.
    await assert.rejects(async () => source.getKey(header('k2'), TOKEN), JwksUnavailableError);
    assert.equal(state.fetches, 2);
    const key = await source.getKey(header('k1'), TOKEN);
    assert.equal((key as { type: string }).type, 'public');
    await assert.rejects(async () => source.getKey(header('k2'), TOKEN), JwksUnavailableError);
    assert.equal(state.fetches, 2, 'no fetch during the backoff');
    // Rotation once the endpoint is back: the new kid loads after the backoff.
    state.serving = await keySet('k1', 'k2');
    state.up = true;
    clock.ms += 1000;
    assert.equal(((await source.getKey(header('k2'), TOKEN)) as { type: string }).type, 'public');
    assert.equal(state.fetches, 3);
  });

  it('version() moves when the loaded key set changes content, not on a refetch of the same keys or a failure', async () => {
    const { source, state, clock } = setup(await keySet('k1'));
    state.up = true;
    await source.prefetch();
    const loaded = source.version();
    // Same content in a new object (what every jose fetch gives): no change.
    state.serving = structuredClone(state.serving);
    await assert.rejects(async () => source.getKey(header('nope'), TOKEN), errors.JWKSNoMatchingKey);
    assert.equal(state.fetches, 2);
    assert.equal(source.version(), loaded);
    state.up = false;
    await assert.rejects(async () => source.getKey(header('nope2'), TOKEN), JwksUnavailableError);
    assert.equal(source.version(), loaded, 'a failed fetch keeps the keys (and the version)');
    state.up = true;
    clock.ms += 1000;
    state.serving = await keySet('k2');
    await source.getKey(header('k2'), TOKEN);
    assert.equal(source.version(), loaded + 1);
  });

  it('a broken endpoint answer (not a key set, timeout) counts as unavailable', async () => {
    for (const failure of [
      new errors.JWKSInvalid('JSON Web Key Set malformed'),
      new errors.JWKSTimeout(),
      new errors.JOSEError('Expected 200 OK from the JSON Web Key Set HTTP response'),
    ]) {
      const { source, state } = setup(await keySet('k1'));
      state.failWith = () => failure;
      await assert.rejects(async () => source.getKey(header('k1'), TOKEN), JwksUnavailableError);
    }
  });
});
