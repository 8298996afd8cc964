import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { SignJWT } from 'jose';
import { GatewaySettingsSchema } from '../config/schema.js';
import { createEventBus, type GatewayEvents } from '../observability/events.js';
import { createLogger } from '../observability/logger.js';
import { createAuthenticator, outcomeName, reportAuthResult } from './authenticator.js';
import type { AuthOutcome } from './types.js';
import { createJwksRegistry } from './jwks-registry.js';
import type { JwksKeySource } from './jwks.js';
import { gatewayRefusal } from './refusal.js';

const SECRET = 'unit-secret-0123456789abcdef0123456789abcdef';
const deps = { events: createEventBus(), logger: createLogger({ level: 'silent' }) };

describe('createAuthenticator', () => {
  it('undefined when no secret, jwksUrl, authService or introspection is set', () => {
    assert.equal(createAuthenticator(GatewaySettingsSchema.parse({}), deps), undefined);
  });

  it('secret only: local mode validates HS256 itself', async () => {
    const a = createAuthenticator(GatewaySettingsSchema.parse({ auth: { secret: SECRET } }), deps)!;
    const token = await new SignJWT({ sub: 'u1' })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(SECRET));
    const req = {
      headers: { authorization: `Bearer ${token}` },
      rawHeaders: ['Authorization', `Bearer ${token}`],
    } as unknown as IncomingMessage;
    assert.deepEqual(await a.authenticate(req, 'r'), {
      ok: true,
      claimHeaders: [['X-sub', 'u1']],
      claims: { sub: 'u1' },
    });
  });

  it('every mode refuses several Authorization headers before validating (400 GW_AUTH_AMBIGUOUS)', async () => {
    const settings = [
      { auth: { secret: SECRET } },
      { auth: { jwksUrl: 'http://127.0.0.1:9/jwks.json' } },
      { auth: { authService: '127.0.0.1:9' } },
      { auth: { introspection: { url: 'http://127.0.0.1:9/introspect', clientId: 'gw', clientSecret: 's' } } },
    ];
    let keyLookups = 0;
    const jwks = createJwksRegistry({ logger: deps.logger, createSource: () => fakeSource(() => keyLookups++) });
    for (const s of settings) {
      const a = createAuthenticator(GatewaySettingsSchema.parse(s), { ...deps, jwks })!;
      // Port 9 (discard) never answers as an auth service: reaching it would give 503, not 400.
      const req = {
        headers: { authorization: 'Bearer a' },
        rawHeaders: ['authorization', 'Bearer a', 'AUTHORIZATION', 'Bearer b'],
      } as unknown as IncomingMessage;
      const outcome = await a.authenticate(req, 'r');
      assert.equal(outcome.ok, false, JSON.stringify(s));
      if (outcome.ok) continue;
      assert.equal(outcome.status, 400);
      assert.equal(outcome.code, 'GW_AUTH_AMBIGUOUS');
      assert.deepEqual(JSON.parse(outcome.body.toString()), { error: 'Several Authorization headers', success: false });
      await a.close?.();
    }
    assert.equal(keyLookups, 0);
  });

  it('JWKS mode takes its key source from the process registry: one per URL and cooldown', () => {
    const made: string[] = [];
    const jwks = createJwksRegistry({
      logger: deps.logger,
      createSource: (o) => (made.push(`${o.cooldownSec} ${o.url}`), fakeSource(() => 0)),
    });
    const settings = (cooldown: number) =>
      GatewaySettingsSchema.parse({
        auth: { jwksUrl: 'http://idp.test/jwks.json', jwksCooldownSec: cooldown, audience: `a${cooldown}` },
      });
    createAuthenticator(settings(30), { ...deps, jwks });
    createAuthenticator(settings(30), { ...deps, jwks });
    assert.deepEqual(made, ['30 http://idp.test/jwks.json']);
    createAuthenticator(settings(5), { ...deps, jwks });
    assert.deepEqual(made, ['30 http://idp.test/jwks.json', '5 http://idp.test/jwks.json']);
  });
});

/** A key source that never has a key; `onLookup` counts lookups. */
function fakeSource(onLookup: () => unknown): JwksKeySource {
  return {
    getKey: async () => {
      onLookup();
      throw new Error('no keys in this test');
    },
    prefetch: async () => {},
    version: () => 0,
  };
}

describe('auth results', () => {
  const cases: [AuthOutcome, string][] = [
    [{ ok: true, claimHeaders: [] }, 'ok'],
    [gatewayRefusal('GW_AUTH_MISSING', 'd'), 'missing'],
    [gatewayRefusal('GW_AUTH_INVALID', 'd'), 'invalid'],
    [gatewayRefusal('GW_AUTH_UNAVAILABLE', 'd'), 'unavailable'],
    [{ ok: false, status: 403, headers: {}, body: Buffer.alloc(0) }, 'denied'],
  ];
  for (const [outcome, name] of cases) it(`${name}`, () => assert.equal(outcomeName(outcome), name));

  it('reportAuthResult emits one event, with the reason for refusals', () => {
    const events = createEventBus();
    const seen: GatewayEvents['auth:result'][] = [];
    events.on('auth:result', (e) => seen.push(e));
    reportAuthResult(events, 'r1', 'GET /x', { ok: true, claimHeaders: [] });
    reportAuthResult(events, 'r2', 'GET /x', { ok: false, status: 403, headers: {}, body: Buffer.alloc(0) });
    reportAuthResult(events, 'r3', 'GET /x', gatewayRefusal('GW_AUTH_INVALID', 'ERR_JWT_EXPIRED'));
    assert.deepEqual(seen, [
      { requestId: 'r1', routeId: 'GET /x', outcome: 'ok' },
      { requestId: 'r2', routeId: 'GET /x', outcome: 'denied', detail: 'status 403' },
      { requestId: 'r3', routeId: 'GET /x', outcome: 'invalid', detail: 'ERR_JWT_EXPIRED' },
    ]);
  });
});
