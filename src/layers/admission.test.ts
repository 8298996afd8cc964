import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { admissionLayer, type AdmissionOptions } from './admission.js';
import { createAdmissionCounts } from './admission-counts.js';
import type { CompiledRoute, Exchange, Step } from '../pipeline/types.js';
import { fakeExchange, fakeUpgradeExchange, neverRuns, waitingNext } from '../../test/support/exchanges.js';

const ROUTE = { id: 'GET /slow', kind: 'standard' } as CompiledRoute;

function limits(gatewayMax: number | undefined, routeMax: number | undefined, extra: Partial<AdmissionOptions> = {}) {
  const counts = createAdmissionCounts();
  const options: AdmissionOptions = {
    gateway: gatewayMax === undefined ? undefined : { count: counts.gateway, max: gatewayMax },
    route: routeMax === undefined ? undefined : { count: counts.route(ROUTE.id), max: routeMax },
    retryAfterSec: 1,
    releaseOnResponseStart: false,
    ...extra,
  };
  return { counts, options };
}

/** Starts `n` requests through `step`, each held by its own waiting next until `finish()`. */
async function hold(layer: (next: Step) => Step, n: number) {
  const waits = Array.from({ length: n }, () => waitingNext<Exchange>());
  const done = waits.map((w) => layer(w.next)(fakeExchange(ROUTE).ex));
  await Promise.all(waits.map((w) => w.started));
  return {
    finish: async () => {
      for (const w of waits) w.finish();
      await Promise.all(done);
    },
  };
}

describe('admissionLayer', () => {
  it('admits up to the gateway limit, then answers 503 GW_OVERLOADED with Retry-After, unread, next never runs', async () => {
    const { counts, options } = limits(2, undefined, { retryAfterSec: 3 });
    const layer = admissionLayer(options);
    const held = await hold(layer, 2);
    assert.equal(counts.gateway.inFlight, 2);
    const { ex, written, resumed } = fakeExchange(ROUTE);
    await layer(neverRuns())(ex);
    assert.equal(written.status, 503);
    assert.equal(written.headers['retry-after'], 3);
    assert.equal(written.headers['x-portico-error'], 'GW_OVERLOADED');
    assert.equal(ex.errorCode, 'GW_OVERLOADED');
    assert.equal(resumed(), 1, 'the body is drained, not read');
    assert.equal(counts.gateway.refused, 1);
    assert.equal(counts.gateway.inFlight, 2, 'a refused request holds no slot');
    await held.finish();
    assert.equal(counts.gateway.inFlight, 0);
  });

  it('a slot freed by an answered request admits the next one', async () => {
    const { options } = limits(1, undefined);
    const layer = admissionLayer(options);
    const first = await hold(layer, 1);
    await first.finish();
    const second = await hold(layer, 1);
    await second.finish();
  });

  it('the route limit refuses on its own and is counted as the route refusal', async () => {
    const { counts, options } = limits(10, 1);
    const layer = admissionLayer(options);
    const held = await hold(layer, 1);
    assert.deepEqual(counts.route(ROUTE.id), { inFlight: 1, refused: 0 });
    assert.equal(counts.gateway.inFlight, 1, 'an admitted request counts under both limits');
    const { ex, written } = fakeExchange(ROUTE);
    await layer(neverRuns())(ex);
    assert.equal(written.status, 503);
    assert.deepEqual(counts.route(ROUTE.id), { inFlight: 1, refused: 1 });
    assert.equal(counts.gateway.refused, 0);
    await held.finish();
    assert.deepEqual([counts.gateway.inFlight, counts.route(ROUTE.id).inFlight], [0, 0]);
  });

  it('the gateway limit refuses a route that still has room', async () => {
    const { counts, options } = limits(1, 5);
    const layer = admissionLayer(options);
    const held = await hold(layer, 1);
    const { ex, written } = fakeExchange(ROUTE);
    await layer(neverRuns())(ex);
    assert.equal(written.status, 503);
    assert.equal(counts.gateway.refused, 1);
    assert.equal(counts.route(ROUTE.id).refused, 0);
    await held.finish();
  });

  it('releases the slot when next throws', async () => {
    const { counts, options } = limits(1, 1);
    const layer = admissionLayer(options);
    const failing: Step = async () => {
      throw new Error('boom');
    };
    await assert.rejects(layer(failing)(fakeExchange(ROUTE).ex), /boom/);
    assert.equal(counts.gateway.inFlight, 0);
    assert.equal(counts.route(ROUTE.id).inFlight, 0);
  });

  it('on a stream route, releases the slot once the head is sent, once', async () => {
    const { counts, options } = limits(1, undefined, { releaseOnResponseStart: true });
    const layer = admissionLayer(options);
    const stream = waitingNext<Exchange>((e) => e.onResponseStart?.());
    const done = layer(stream.next)(fakeExchange(ROUTE).ex);
    await stream.started;
    assert.equal(counts.gateway.inFlight, 0, 'an open stream holds no slot');
    const next = await hold(layer, 1);
    assert.equal(counts.gateway.inFlight, 1);
    stream.finish();
    await done;
    assert.equal(counts.gateway.inFlight, 1, 'the stream end releases nothing twice');
    await next.finish();
    assert.equal(counts.gateway.inFlight, 0);
  });

  it('refuses a WebSocket handshake on its socket', async () => {
    const { options } = limits(1, undefined);
    const layer = admissionLayer(options);
    const held = await hold(layer, 1);
    const { ex, socket } = fakeUpgradeExchange({ ...ROUTE, kind: 'websocket' } as CompiledRoute);
    await layer(neverRuns())(ex);
    assert.match(socket.text(), /^HTTP\/1\.1 503 /);
    assert.match(socket.text(), /retry-after: 1\r\n/i);
    await held.finish();
  });
});
