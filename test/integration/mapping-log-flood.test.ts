/**
 * A mapping service down for a while must not flood the log: with its circuit open, every mapped
 * response skips every item's call. The warnings are aggregated (one line per response and rule,
 * with the items affected) and identical lines are rate-limited with a count, while the metric
 * still counts every failed call.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { postsWithAuthors } from '../support/posts-route.js';

const ITEMS = 50;
const REQUESTS = 20;

describe('mapping warnings during an outage', () => {
  let posts: TestBackend;
  let users: TestBackend;
  let gw: TestGateway;

  before(async () => {
    const body = Array.from({ length: ITEMS }, (_, i) => ({ id: i, authorId: `u${i}` }));
    posts = await startBackend((_req, res) => json(res, 200, body));
    users = await startBackend((_req, res) => json(res, 500, { error: 'down' }));
    gw = await startGateway(`
routes:
${postsWithAuthors(posts, users)}
config:
  circuitBreaker: { enabled: true, maxFailures: 5, timeoutSec: 60 }
`);
  });
  after(() => closeAll(gw, posts, users));

  it(`${REQUESTS} responses of ${ITEMS} items each: at most one warning per reason, each with its item count`, async () => {
    for (let i = 0; i < REQUESTS; i++) {
      const res = await request(`${gw.url}/api/posts`);
      assert.equal(res.statusCode, 200, 'a failed mapping never fails the response');
      const items = (await res.body.json()) as { author?: unknown }[];
      assert.equal(items.length, ITEMS);
      assert.ok(items.every((item) => item.author === undefined));
    }
    assert.equal(gw.gateway.circuits.snapshot().find((c) => c.origin === users.url)?.state, 'open');
    const warnings = gw.logs.filter((l) => l.msg === 'mapping failed');
    // One line for the calls answered 500 (first response), one for the calls skipped while the
    // circuit is open; every later identical line is counted for the window's summary line.
    assert.deepEqual(
      warnings.map((l) => ({ route: l.route, tag: l.tag, reason: l.reason, items: l.items })),
      [
        { route: 'GET /posts', tag: 'author', reason: 'status 500', items: ITEMS },
        { route: 'GET /posts', tag: 'author', reason: 'circuit open', items: ITEMS },
      ],
    );
    const text = await (await request(`${gw.url}/metrics`)).body.text();
    assert.match(
      text,
      new RegExp(`^portico_mapping_failures_total\\{route="/posts",tag="author"\\} ${REQUESTS * ITEMS}$`, 'm'),
      'every failed call is counted',
    );
  });
});
