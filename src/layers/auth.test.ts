/** The auth layer with a fake next (recording / must-never-run) and a fake authenticator. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createEventBus, type GatewayEvents } from '../observability/events.js';
import type { CompiledRoute, Exchange, Step } from '../pipeline/types.js';
import type { Authenticator, AuthOutcome } from '../auth/types.js';
import { authLayer } from './auth.js';
import {
  fakeExchange,
  fakeRequest,
  fakeUpgradeExchange,
  neverRuns,
  recordingNext,
} from '../../test/support/exchanges.js';
import { createHash } from 'node:crypto';
import { compileApiKeySource } from '../auth/api-key-source.js';
import { createKeyStore } from '../auth/key-store.js';
import { compileConsumers } from '../config/consumers-file.js';
import { gatewayRefusal } from '../auth/refusal.js';

const ROUTE = { id: 'GET /orders' } as CompiledRoute;

/** An authenticator answering `outcome` in a promise, or as a plain value (a cached token). */
const answering = (outcome: AuthOutcome, plain = false): Authenticator & { calls: number } => {
  const a = {
    calls: 0,
    authenticate: () => (a.calls++, plain ? outcome : Promise.resolve(outcome)),
  };
  return a;
};

for (const plain of [false, true])
  describe(`authLayer, the outcome ${plain ? 'as a plain value' : 'in a promise'}`, () => {
    function run(outcome: AuthOutcome) {
      const events = createEventBus();
      const results: GatewayEvents['auth:result'][] = [];
      events.on('auth:result', (e) => results.push(e));
      const seen: Exchange[] = [];
      const next: Step = async (ex) => void seen.push(ex);
      const authenticator = answering(outcome, plain);
      return { step: authLayer(authenticator, events)(next), seen, results, authenticator };
    }

    it('ok with claims: next runs with the claim headers on the exchange', async () => {
      const { step, seen, results } = run({ ok: true, claimHeaders: [['X-role', 'admin']] });
      const { ex, written } = fakeExchange(ROUTE);
      await step(ex);
      assert.equal(seen.length, 1);
      assert.deepEqual(seen[0]?.claimHeaders, [['X-role', 'admin']]);
      assert.equal(written.status, undefined);
      assert.deepEqual(results, [{ requestId: 'rid-1', routeId: 'GET /orders', outcome: 'ok' }]);
    });

    it('ok without claims: next runs and claimHeaders stays undefined', async () => {
      const { step, seen } = run({ ok: true, claimHeaders: [] });
      const { ex } = fakeExchange(ROUTE);
      await step(ex);
      assert.equal(seen.length, 1);
      assert.equal(seen[0]?.claimHeaders, undefined);
    });

    it('a gateway refusal is written as it is, next never runs, the body is drained', async () => {
      const refusal = gatewayRefusal('GW_AUTH_INVALID', 'ERR_JWT_EXPIRED: "exp" claim timestamp check failed');
      const { step, seen, results } = run(refusal);
      const { ex, written, resumed } = fakeExchange(ROUTE);
      await step(ex);
      assert.equal(seen.length, 0);
      assert.equal(written.status, 401);
      assert.deepEqual(written.headers, refusal.headers);
      assert.deepEqual(JSON.parse(written.body!.toString()), { error: 'Invalid or expired token', success: false });
      assert.equal(resumed(), 1);
      assert.equal(ex.errorCode, 'GW_AUTH_INVALID');
      assert.deepEqual(results, [
        {
          requestId: 'rid-1',
          routeId: 'GET /orders',
          outcome: 'invalid',
          detail: 'ERR_JWT_EXPIRED: "exp" claim timestamp check failed',
        },
      ]);
    });

    it('a relayed auth service answer: written unchanged, no gateway error code, outcome "denied"', async () => {
      const body = Buffer.from('forbidden');
      const { step, seen, results } = run({
        ok: false,
        status: 403,
        headers: { 'content-type': 'text/plain', 'content-length': '9' },
        body,
        detail: 'auth service answered 403',
      });
      const { ex, written } = fakeExchange(ROUTE);
      await step(ex);
      assert.equal(seen.length, 0);
      assert.equal(written.status, 403);
      assert.deepEqual(written.headers, { 'content-type': 'text/plain', 'content-length': '9' });
      assert.equal(written.body, body);
      assert.equal(ex.errorCode, undefined);
      assert.deepEqual(results, [
        { requestId: 'rid-1', routeId: 'GET /orders', outcome: 'denied', detail: 'auth service answered 403' },
      ]);
    });
  });

describe('authLayer on a WebSocket handshake', () => {
  const route = { id: 'GET /chat' } as CompiledRoute;

  function runUpgrade(outcome: AuthOutcome) {
    const events = createEventBus();
    const results: GatewayEvents['auth:result'][] = [];
    events.on('auth:result', (e) => results.push(e));
    return { layer: authLayer(answering(outcome), events), results };
  }

  it('ok with claims: next runs with the claim headers, nothing is written', async () => {
    const { layer, results } = runUpgrade({ ok: true, claimHeaders: [['X-role', 'admin']] });
    const { next, seen } = recordingNext<Exchange>();
    const { ex, socket } = fakeUpgradeExchange(route);
    await layer(next)(ex);
    assert.deepEqual(seen, [ex]);
    assert.deepEqual(ex.claimHeaders, [['X-role', 'admin']]);
    assert.equal(socket.written.length, 0);
    assert.deepEqual(results, [{ requestId: 'rid-1', routeId: 'GET /chat', outcome: 'ok' }]);
  });

  it("a refusal: the outcome's response goes onto the socket with the request id, next never runs", async () => {
    const refusal = gatewayRefusal('GW_AUTH_INVALID', 'expired');
    const { layer, results } = runUpgrade(refusal);
    const { ex, socket } = fakeUpgradeExchange(route);
    await layer(neverRuns())(ex);
    await once(socket, 'close');
    const text = socket.text();
    assert.ok(text.startsWith('HTTP/1.1 401 Unauthorized\r\n'), text);
    assert.match(text, /\r\nx-request-id: rid-1\r\n/);
    assert.ok(text.endsWith(refusal.body.toString()));
    assert.equal(ex.res.statusCode, 401);
    assert.equal(ex.errorCode, 'GW_AUTH_INVALID');
    assert.deepEqual(
      results.map((r) => r.outcome),
      ['invalid'],
    );
  });
});

describe('authLayer sets the consumer of the exchange', () => {
  const apiKeys = {
    source: compileApiKeySource({ header: 'X-API-Key' })!,
    store: createKeyStore(
      compileConsumers([
        {
          id: 'acme',
          keys: [`sha256:${createHash('sha256').update('acme-key').digest('hex')}`],
          claims: { tier: 'gold' },
          plan: 'gold',
        },
      ]),
    ),
  };

  async function consumerOf(
    authenticator: Authenticator | undefined,
    headers: Record<string, string>,
    planClaim?: string,
  ): Promise<Exchange['consumer'] | 'refused'> {
    const { next, seen } = recordingNext<Exchange>();
    const step = authLayer(authenticator, createEventBus(), { apiKeys, planClaim })(next);
    const { ex } = fakeExchange(ROUTE, fakeRequest(headers));
    await step(ex);
    return seen.length === 1 ? seen[0]!.consumer : 'refused';
  }

  it("an API key: the key's consumer, with its plan; its claims on the exchange", async () => {
    assert.deepEqual(await consumerOf(undefined, { 'x-api-key': 'acme-key' }), { id: 'acme', plan: 'gold' });
  });

  it('a token: its sub, and the plan from auth.planClaim when that claim is text', async () => {
    const tokenHolder = answering({ ok: true, claimHeaders: [], claims: { sub: 'u1', tier: 'silver' } }, true);
    assert.deepEqual(await consumerOf(tokenHolder, { authorization: 'Bearer t' }, 'tier'), {
      id: 'u1',
      plan: 'silver',
    });
    assert.deepEqual(await consumerOf(tokenHolder, { authorization: 'Bearer t' }), { id: 'u1', plan: undefined });
  });

  it('a token without a string sub: no consumer', async () => {
    const anonymous = answering({ ok: true, claimHeaders: [], claims: { sub: 7 } }, true);
    assert.equal(await consumerOf(anonymous, { authorization: 'Bearer t' }), undefined);
  });

  it('an unknown key, or no key without a token mode: refused', async () => {
    assert.equal(await consumerOf(undefined, { 'x-api-key': 'other' }), 'refused');
    assert.equal(await consumerOf(undefined, {}), 'refused');
  });
});
