import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway } from '../support/gateway.js';
import { createManualClock } from '../support/manual-clock.js';

const POSTS = [
  { id: 1, authorId: 'a', title: 'one' },
  { id: 2, authorId: 'a', title: 'two' },
];

function yaml(posts: TestBackend, users: TestBackend): string {
  return `
routes:
  - { method: GET, route: /posts, service: ${posts.host}, path: /posts,
      mapping: [{ path: "/users/{authorId}", service: ${users.host}, tag: author, removeKeyMapping: true }] }
  - { method: GET, route: "/users/{id}", service: ${users.host}, path: "/users/{id}" }
config:
  circuitBreaker:
    enabled: true
    maxFailures: 2
    timeoutSec: 1
    halfOpenRequests: 1
`;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('circuit breaker and response mapping (one circuit per origin, shared)', () => {
  it('a mapping service failing opens its circuit; the rule is then skipped without a call', async () => {
    let usersUp = false;
    let postsUp = true;
    const posts = await startBackend((_req, res) =>
      postsUp ? json(res, 200, POSTS) : json(res, 500, { error: 'down' }),
    );
    const users = await startBackend((req, res) =>
      usersUp ? json(res, 200, { id: 'a', name: 'Ada', url: req.url }) : json(res, 500, { error: 'down' }),
    );
    cleanups.push(
      () => posts.close(),
      () => users.close(),
    );
    const clock = createManualClock();
    const gw = await startGateway(yaml(posts, users), process.env, { now: clock.now });
    cleanups.push(() => gw.close());
    const untagged = POSTS;

    // Two requests, one distinct URL each: two consecutive failures open the users circuit.
    for (let i = 1; i <= 2; i++) {
      const res = await gw.get('/api/posts');
      assert.equal(res.status, 200, 'a failed mapping never fails the response');
      assert.deepEqual(res.json(), untagged);
      assert.equal(users.seen.length, i);
    }
    assert.deepEqual(
      gw.gateway.circuits.snapshot().find((c) => c.origin === users.url),
      { origin: users.url, state: 'open', consecutiveFailures: 2 },
    );

    // Open: the rule is skipped, no call; the item goes without the tag (and keeps its key).
    const skipped = await gw.get('/api/posts');
    assert.equal(skipped.status, 200);
    assert.deepEqual(skipped.json(), untagged);
    assert.equal(users.seen.length, 2);
    assert.equal(posts.seen.length, 3);
    const warning = gw.logs.findLast((l) => l.msg === 'mapping failed');
    assert.equal(warning?.reason, 'circuit open');

    // The same origin's circuit guards the standard route too.
    const direct = await gw.get('/api/users/a');
    assert.equal(direct.status, 503);
    assert.equal(direct.headers['x-portico-error'], 'GW_CIRCUIT_OPEN');
    assert.deepEqual(direct.json(), { error: 'Service temporarily unavailable (circuit open)', success: false });
    assert.equal(users.seen.length, 2);

    // After timeoutSec the mapping call is the probe; its success closes the circuit.
    clock.advance(1_000);
    usersUp = true;
    const recovered = await gw.get('/api/posts');
    assert.deepEqual(recovered.json(), [
      { id: 1, title: 'one', author: { id: 'a', name: 'Ada', url: '/users/a' } },
      { id: 2, title: 'two', author: { id: 'a', name: 'Ada', url: '/users/a' } },
    ]);
    assert.equal(users.seen.length, 3);
    assert.equal(gw.gateway.circuits.snapshot().find((c) => c.origin === users.url)?.state, 'closed');
    assert.equal((await gw.get('/api/users/a')).status, 200);
    assert.equal(users.seen.length, 4);

    // The primary backend has its own circuit: it failing turns the mapped route into 503s.
    postsUp = false;
    assert.equal((await gw.get('/api/posts')).status, 500);
    assert.equal((await gw.get('/api/posts')).status, 500);
    const open = await gw.get('/api/posts');
    assert.equal(open.status, 503);
    assert.equal(open.headers['x-portico-error'], 'GW_CIRCUIT_OPEN');
    assert.equal(posts.seen.length, 6);
    assert.equal(users.seen.length, 4, 'a failing primary answer is not enriched');
    assert.deepEqual(
      gw.gateway.circuits.snapshot(),
      [
        { origin: posts.url, state: 'open', consecutiveFailures: 2 },
        { origin: users.url, state: 'closed', consecutiveFailures: 0 },
      ].sort((x, y) => (x.origin < y.origin ? -1 : 1)),
    );
  });
});
