/**
 * Which backend statuses count as failures for an origin's circuit (docs/circuit-breaker.md,
 * "Failures a client can provoke"): every 5xx by default, or the list `failureStatuses` names, for
 * the whole origin (`config.circuitBreaker`) or one route's own calls (`circuitBreaker:` on the
 * route). A status left out counts neither way: it neither opens the circuit nor resets its count.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';

/** A backend that answers the status its path names: `/500` answers 500, `/items` a JSON list. */
function statusBackend(): Promise<TestBackend> {
  return startBackend((req, res) => {
    if (req.url === '/items') return json(res, 200, [{ id: 1, code: 500 }]);
    const code = Number((req.url ?? '').slice(1));
    json(res, code, { code });
  });
}

function yaml(backend: TestBackend, { origin = '', route = '' }: { origin?: string; route?: string } = {}): string {
  return `
config:
  circuitBreaker: { enabled: true, maxFailures: 5, timeoutSec: 30${origin} }
routes:
  - { method: GET, route: "/plain/{code}", service: ${backend.host}, path: "/{code}" }
  - method: GET
    route: "/guarded/{code}"
    service: ${backend.host}
    path: "/{code}"
${route}
  - { method: GET, route: /items, service: ${backend.host}, path: /items,
      mapping: [{ path: "/{code}", service: ${backend.host}, tag: extra }] }
`;
}

async function statuses(gw: TestGateway, path: string, times: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < times; i++) out.push((await gw.get(path)).status);
  return out;
}

const state = (gw: TestGateway) => gw.gateway.circuits.snapshot()[0];

describe('circuitBreaker.failureStatuses', () => {
  it('without it, every 5xx is a failure: five 500s open the circuit (unchanged)', async () => {
    const backend = await statusBackend();
    const gw = await startGateway(yaml(backend));
    try {
      assert.deepEqual(await statuses(gw, '/api/plain/500', 6), [500, 500, 500, 500, 500, 503]);
      assert.equal(state(gw)?.state, 'open');
    } finally {
      await closeAll(gw, backend);
    }
  });

  it("a route's own list: five 500s from it leave the circuit closed; 502s still open it", async () => {
    const backend = await statusBackend();
    const gw = await startGateway(yaml(backend, { route: '    circuitBreaker: { failureStatuses: [502, 503, 504] }' }));
    try {
      assert.deepEqual(await statuses(gw, '/api/guarded/500', 10), Array(10).fill(500));
      assert.deepEqual(state(gw), { origin: backend.url, state: 'closed', consecutiveFailures: 0 });
      // The origin's other routes keep the default: their 500s count.
      assert.deepEqual(await statuses(gw, '/api/plain/500', 2), [500, 500]);
      assert.equal(state(gw)?.consecutiveFailures, 2);
      // A 500 left out counts neither way: it does not reset the run of failures.
      assert.deepEqual(await statuses(gw, '/api/guarded/500', 1), [500]);
      assert.deepEqual(await statuses(gw, '/api/guarded/502', 3), [502, 502, 502]);
      assert.equal(state(gw)?.state, 'open');
      assert.deepEqual(await statuses(gw, '/api/guarded/500', 1), [503]);
    } finally {
      await closeAll(gw, backend);
    }
  });

  it("the origin's list applies to every route and mapping call on it; a route's own list wins", async () => {
    const backend = await statusBackend();
    const gw = await startGateway(
      yaml(backend, {
        origin: ', failureStatuses: [502, 503, 504]',
        route: '    circuitBreaker: { failureStatuses: [500, 502, 503, 504] }',
      }),
    );
    try {
      assert.deepEqual(await statuses(gw, '/api/plain/500', 6), Array(6).fill(500));
      // Each /items makes a mapping call answered 500: left out, it counts nothing.
      assert.deepEqual(await statuses(gw, '/api/items', 6), Array(6).fill(200));
      assert.deepEqual(state(gw), { origin: backend.url, state: 'closed', consecutiveFailures: 0 });
      assert.deepEqual(await statuses(gw, '/api/guarded/500', 6), [500, 500, 500, 500, 500, 503]);
    } finally {
      await closeAll(gw, backend);
    }
  });
});
