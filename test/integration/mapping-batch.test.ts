/**
 * Batched mapping (`batch:` on a mapping rule) end to end with real local services: 250 distinct
 * values with `max: 100` make exactly 3 batch calls and tag every item; with half the values
 * cached, only the other half is asked for; both answer shapes (an array matched by `key`, an
 * object keyed by value); a value the batch does not return leaves its items untagged; values are
 * percent-encoded. `portico check` refuses bad batches.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { request } from 'undici';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { loadConfigText } from '../../src/config/load.js';
import { formatProblem } from '../../src/config/problems.js';
import { closeAll } from '../support/close-all.js';
import { h2request } from '../support/http2.js';

const ITEMS = 250;

describe('batched mapping', () => {
  let posts: TestBackend;
  let users: TestBackend;
  let gw: TestGateway;
  before(async () => {
    posts = await startBackend((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const from = Number(url.searchParams.get('from') ?? 0);
      const count = Number(url.searchParams.get('count') ?? ITEMS);
      const items = Array.from({ length: count }, (_, i) => ({ id: from + i, authorId: `u${from + i}` }));
      if (url.pathname === '/odd')
        return json(res, 200, [
          { id: 1, authorId: 'a b/c' },
          { id: 2, authorId: 'gone' },
          { id: 3, authorId: 7 },
        ]);
      json(res, 200, items);
    });
    users = await startBackend((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const ids = (url.searchParams.get('ids') ?? '').split(',');
      const known = ids.filter((id) => id !== 'gone');
      if (url.pathname === '/users/by-id')
        return json(res, 200, Object.fromEntries(known.map((id) => [id, { name: `user ${id}` }])));
      json(
        res,
        200,
        known.map((id) => ({ id: /^\d+$/.test(id) ? Number(id) : id, name: `user ${id}` })),
      );
    });
    gw = await startGateway(`
config:
  http2: { cleartext: true }
  mappingCache:
    enabled: true
    ttlSec: 60
routes:
  - method: GET
    route: /posts
    service: ${posts.host}
    path: /posts
    public: true
    mapping:
      - path: /users/{authorId}
        service: ${users.host}
        tag: author
        batch:
          path: /users?ids={values}
          key: id
          max: 100
  - method: GET
    route: /odd
    service: ${posts.host}
    path: /odd
    public: true
    mapping:
      - path: /people/{authorId}
        service: ${users.host}
        tag: author
        batch:
          path: /users/by-id?ids={values}
`);
  });
  after(() => closeAll(gw, posts, users));

  const get = async (path: string) => {
    const res = await request(`${gw.url}/api${path}`);
    return {
      status: res.statusCode,
      body: (await res.body.json()) as { id: number; authorId: unknown; author?: unknown }[],
    };
  };

  it('250 distinct values with max 100: exactly 3 batch calls, every item tagged', async () => {
    const before = users.seen.length;
    const r = await get(`/posts?from=0&count=${ITEMS}`);
    assert.equal(r.status, 200);
    const calls = users.seen.slice(before);
    assert.equal(calls.length, 3);
    assert.deepEqual(
      calls.map((c) => new URL(c.url, 'http://x').searchParams.get('ids')!.split(',').length),
      [100, 100, 50],
    );
    assert.equal(r.body.length, ITEMS);
    for (const item of r.body)
      assert.deepEqual(item.author, { id: item.authorId, name: `user ${String(item.authorId)}` });
  });

  it('with half the values cached, only the other half is asked for', async () => {
    // Values u0..u249 are cached by the test above; u250..u499 are not.
    const before = users.seen.length;
    const r = await get(`/posts?from=125&count=${ITEMS}`);
    const calls = users.seen.slice(before);
    const asked = calls.flatMap((c) => new URL(c.url, 'http://x').searchParams.get('ids')!.split(','));
    assert.deepEqual(asked.sort(), Array.from({ length: 125 }, (_, i) => `u${250 + i}`).sort());
    assert.equal(calls.length, 2);
    for (const item of r.body) assert.equal((item.author as { name: string }).name, `user ${String(item.authorId)}`);
  });

  it('an object keyed by value; values percent-encoded; a value not returned leaves its item untagged', async () => {
    const before = users.seen.length;
    const r = await get('/odd');
    assert.equal(users.seen.length - before, 1);
    assert.equal(users.seen.at(-1)!.url, '/users/by-id?ids=a%20b%2Fc,gone,7');
    assert.deepEqual(r.body, [
      { id: 1, authorId: 'a b/c', author: { name: 'user a b/c' } },
      { id: 2, authorId: 'gone' },
      { id: 3, authorId: 7, author: { name: 'user 7' } },
    ]);
    const warning = gw.logs.find((l) => l.msg === 'mapping failed' && l.route === 'GET /odd');
    assert.equal(warning?.reason, 'not in the batch answer');
  });
});

describe('batched mapping over HTTP/2', () => {
  it('answers the same enriched body as over HTTP/1.1, its content-length in bytes', async () => {
    const posts = await startBackend((_req, res) =>
      json(res, 200, [
        { id: 1, authorId: 'é' },
        { id: 2, authorId: 'b' },
      ]),
    );
    const users = await startBackend((req, res) => {
      const ids = (new URL(req.url ?? '/', 'http://x').searchParams.get('ids') ?? '').split(',');
      json(
        res,
        200,
        ids.map((id) => ({ id, name: `👤 ${id}` })),
      );
    });
    const gw = await startGateway(`
config:
  http2: { cleartext: true }
routes:
  - method: GET
    route: /posts
    service: ${posts.host}
    path: /posts
    public: true
    mapping:
      - path: /users/{authorId}
        service: ${users.host}
        tag: author
        batch: { path: "/users?ids={values}", key: id }
`);
    const session = connect(gw.url);
    try {
      const expected = [
        { id: 1, authorId: 'é', author: { id: 'é', name: '👤 é' } },
        { id: 2, authorId: 'b', author: { id: 'b', name: '👤 b' } },
      ];
      const h1 = await request(`${gw.url}/api/posts`);
      const h1Body = await h1.body.text();
      assert.deepEqual(JSON.parse(h1Body), expected);
      assert.equal(h1.headers['content-length'], String(Buffer.byteLength(h1Body)));
      const h2 = await h2request(session, '/api/posts');
      assert.equal(h2.status, 200);
      assert.equal(h2.body, h1Body);
      assert.equal(h2.headers['content-length'], String(Buffer.byteLength(h2.body)));
      assert.equal(users.seen.length, 2);
    } finally {
      session.close();
      await closeAll(gw, posts, users);
    }
  });
});

describe('portico check: batched mapping', () => {
  const problems = (batch: string, path = '/users/{authorId}') => {
    const r = loadConfigText(
      `routes:
  - method: GET
    route: /posts
    service: 127.0.0.1:9
    path: /posts
    mapping:
      - path: ${path}
        service: 127.0.0.1:9
        tag: author
        batch:
${batch}`,
      'g.yaml',
      {},
    );
    return r.ok ? [] : r.problems.map(formatProblem);
  };

  it('accepts a valid batch, with defaults', () => {
    assert.deepEqual(problems('          path: /users?ids={values}'), []);
  });

  it('refuses a batch path without {values}, a bad separator, a max over 1000, a path with two fields', () => {
    assert.deepEqual(
      problems(
        `          path: /users?ids={ids}
          separator: " "
          max: 5000`,
        '/users/{a}/{b}',
      ),
      [
        'g.yaml:7:15: routes[0].mapping[0].path: a batched rule reads one field, so its path has exactly one {field}; "/users/{a}/{b}" has 2',
        'g.yaml:11:17: routes[0].mapping[0].batch.path: must hold {values} once and no other placeholder (got {ids})',
        'g.yaml:12:22: routes[0].mapping[0].batch.separator: " " must be characters a URL carries as written (such as , ; | or &ids=)',
        'g.yaml:13:16: routes[0].mapping[0].batch.max: must be at most 1000',
      ],
    );
  });
});
