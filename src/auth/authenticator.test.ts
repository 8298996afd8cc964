import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { SignJWT } from 'jose';
import { GatewaySettingsSchema } from '../config/schema.js';
import { createEventBus, type GatewayEvents } from '../observability/events.js';
import { createLogger } from '../observability/logger.js';
import { createAuthenticator, outcomeName, reportAuthResult, type AuthOutcome } from './authenticator.js';
import { gatewayRefusal } from './refusal.js';

const SECRET = 'unit-secret-0123456789abcdef0123456789abcdef';
const deps = { events: createEventBus(), logger: createLogger({ level: 'silent' }) };

describe('createAuthenticator', () => {
  it('undefined when no secret, jwksUrl or authService is set', () => {
    assert.equal(createAuthenticator(GatewaySettingsSchema.parse({}), deps), undefined);
  });

  it('secret only: local mode validates HS256 itself', async () => {
    const a = createAuthenticator(GatewaySettingsSchema.parse({ auth: { secret: SECRET } }), deps)!;
    const token = await new SignJWT({ sub: 'u1' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(SECRET));
    const req = { headers: { authorization: `Bearer ${token}` } } as unknown as IncomingMessage;
    assert.deepEqual(await a.authenticate(req, 'r'), { ok: true, claimHeaders: [['X-sub', 'u1']] });
  });
});

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
