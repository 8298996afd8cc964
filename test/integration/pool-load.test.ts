/**
 * Every call on an upstream's connection pool counts as in flight, whatever endpoint made it: a
 * request that finds the pool busy waits in the gateway's queue, and its 504 comes `backendSec`
 * after it arrived (docs/design-decisions.md "HTTP behaviour"), even when the calls holding the
 * connections are a mapped route's primary call or its mapping calls. A queued request dropped at
 * its deadline never reaches the backend.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { request } from 'undici';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { getStatus } from '../support/http.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A backend that never answers; `reached` resolves when the first request reaches it. */
async function silentBackend(): Promise<{ backend: TestBackend; reached: Promise<void> }> {
  let reachedResolve!: () => void;
  const reached = new Promise<void>((resolve) => (reachedResolve = resolve));
  const held: ServerResponse[] = [];
  const backend = await startBackend((_req, res) => {
    held.push(res);
    reachedResolve();
  });
  cleanups.push(() => backend.close());
  return { backend, reached };
}

/**
 * A gateway with one connection per origin: GET /posts (on `posts`) mapped by `/users/{authorId}`
 * on `users`, and a standard GET /plain on `plainOn`.
 */
async function gateway(posts: string, users: string, plainOn: string, timeouts: string): Promise<TestGateway> {
  const gw = await startGateway(`
routes:
  - method: GET
    route: /posts
    service: ${posts}
    path: /posts
    mapping:
      - { path: "/users/{authorId}", service: ${users}, tag: author }
  - { method: GET, route: /plain, service: ${plainOn}, path: /plain }
config:
  limits: { connectionsPerOrigin: 1 }
  timeouts: ${timeouts}
`);
  cleanups.push(() => gw.close());
  return gw;
}

describe('the queue deadline counts every call on the pool (one connection per origin)', () => {
  it('a standard request queued behind a mapping call gets its 504 and never reaches the backend', async () => {
    const posts = await startBackend((_req, res) => json(res, 200, [{ id: 1, authorId: 'a1' }]));
    cleanups.push(() => posts.close());
    const { backend: users, reached } = await silentBackend();
    const gw = await gateway(posts.host, users.host, users.host, '{ backendSec: 0.5, mappingSec: 2 }');
    const mapped = request(`${gw.url}/api/posts`);
    await reached;
    assert.equal(await getStatus(`${gw.url}/api/plain`), 504);
    // Counted or not, the mapping call ends at mappingSec; the queued request must be gone by then.
    const res = await mapped;
    assert.equal(res.statusCode, 200);
    await res.body.dump();
    assert.deepEqual(
      users.seen.map((r) => r.url),
      ['/users/a1'],
      'only the mapping call reached the backend',
    );
  });

  it("a standard request queued behind a mapped route's primary call gets its 504 and never reaches the backend", async () => {
    // The primary answers its head at once and holds the rest of its body until released.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reachedResolve!: () => void;
    const reached = new Promise<void>((resolve) => (reachedResolve = resolve));
    const posts = await startBackend((req, res) => {
      if (req.url !== '/posts') return json(res, 200, {});
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      reachedResolve();
      void released.then(() => res.end(']'));
    });
    cleanups.push(async () => {
      release();
      await posts.close();
    });
    const gw = await gateway(posts.host, posts.host, posts.host, '{ backendSec: 0.5, backendIdleSec: 30 }');
    const mapped = getStatus(`${gw.url}/api/posts`);
    await reached;
    // Uncounted, the request waits in undici's queue, where no timer runs, until the primary ends.
    const bound = new Promise<string>((resolve) => setTimeout(() => resolve('no answer'), 5_000).unref());
    assert.equal(await Promise.race([getStatus(`${gw.url}/api/plain`), bound]), 504);
    release();
    assert.equal(await mapped, 200);
    assert.deepEqual(
      posts.seen.map((r) => r.url),
      ['/posts'],
      'only the primary call reached the backend',
    );
  });
});
