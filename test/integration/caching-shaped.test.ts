/**
 * The cache and compression on the routes that build their own JSON (docs/caching.md,
 * docs/compression.md): a filtered route, a mapped route and an aggregated route, each cached,
 * read over HTTP/1.1 and HTTP/2. A hit serves the shaped answer (not the backend's), makes no
 * backend call, and a compressed hit decodes to the same JSON as the uncompressed one.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';

const PAD = 'x'.repeat(2000); // above the compression minimum, so that gzip applies

describe('the cache on filtered, mapped and aggregated routes', () => {
  let users: TestBackend;
  let posts: TestBackend;
  let gw: TestGateway;
  const calls = new Map<string, number>();
  const count = (path: string) => calls.get(path) ?? 0;

  before(async () => {
    const json = (res: import('node:http').ServerResponse, body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=60' });
      res.end(JSON.stringify(body));
    };
    users = await startBackend((req, res) => {
      const path = (req.url ?? '').split('?')[0]!;
      calls.set(path, count(path) + 1);
      json(res, { id: path.split('/').pop(), name: 'Ada', password: 'secret', pad: PAD });
    });
    posts = await startBackend((req, res) => {
      const path = (req.url ?? '').split('?')[0]!;
      calls.set(path, count(path) + 1);
      json(res, { id: 1, title: 'Hello', authorId: 7, draft: true, pad: PAD });
    });
    gw = await startGateway(`
config:
  http2: { cleartext: true }
  compression: { enabled: true, algorithms: [gzip] }
routes:
  - { method: GET, route: /filtered, service: ${users.host}, path: /users/1, cache: true,
      response: { deny: [password], rename: { name: fullName } } }
  - { method: GET, route: /mapped, service: ${posts.host}, path: /posts/1, cache: true,
      mapping: [{ path: "/users/{authorId}", service: ${users.host}, tag: author }],
      response: { deny: [draft, author.password] } }
  - method: GET
    route: /combined
    cache: { ttlSec: 60 }
    backends:
      - { service: ${users.host}, path: /users/9, deny: [password], group: user }
      - { service: ${posts.host}, path: /posts/9, allow: [title], group: post }
`);
  });
  after(() => closeAll(gw, users, posts));

  async function h1(path: string, headers: Record<string, string> = {}) {
    const res = await request(`${gw.url}/api${path}`, { headers });
    const raw = Buffer.from(await res.body.arrayBuffer());
    const encoding = res.headers['content-encoding'];
    const text = (encoding === 'gzip' ? gunzipSync(raw) : raw).toString();
    return { status: res.statusCode, cacheStatus: String(res.headers['cache-status']), encoding, text };
  }

  async function h2(path: string) {
    const session = connect(gw.url);
    try {
      return await new Promise<{ status: number; cacheStatus: string; text: string }>((resolve, reject) => {
        const stream = session.request({ ':path': `/api${path}` });
        let head: Record<string, unknown> = {};
        const chunks: Buffer[] = [];
        stream.on('response', (h) => (head = h));
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () =>
          resolve({
            status: Number(head[':status']),
            cacheStatus: String(head['cache-status']),
            text: Buffer.concat(chunks).toString(),
          }),
        );
        stream.on('error', reject);
      });
    } finally {
      session.close();
    }
  }

  const cases = [
    {
      path: '/filtered',
      backendPaths: ['/users/1'],
      check: (body: Record<string, unknown>) => {
        assert.equal(body.fullName, 'Ada');
        assert.equal(body.password, undefined);
      },
    },
    {
      path: '/mapped',
      backendPaths: ['/posts/1', '/users/7'],
      check: (body: Record<string, unknown>) => {
        assert.equal(body.title, 'Hello');
        assert.equal(body.draft, undefined);
        const author = body.author as Record<string, unknown>;
        assert.equal(author.name, 'Ada');
        assert.equal(author.password, undefined);
      },
    },
    {
      path: '/combined',
      backendPaths: ['/users/9', '/posts/9'],
      check: (body: Record<string, unknown>) => {
        assert.deepEqual(body.post, { title: 'Hello' });
        assert.equal((body.user as Record<string, unknown>).password, undefined);
      },
    },
  ];

  for (const c of cases) {
    it(`${c.path}: a hit over HTTP/1.1 and HTTP/2 is the shaped answer, with no backend call`, async () => {
      const first = await h1(c.path);
      assert.equal(first.status, 200, first.text);
      assert.match(first.cacheStatus, /^Portico; fwd=uri-miss/);
      c.check(JSON.parse(first.text) as Record<string, unknown>);
      const before = c.backendPaths.map(count);

      const again = await h1(c.path);
      assert.equal(again.cacheStatus, 'Portico; hit');
      assert.equal(again.text, first.text);
      const overH2 = await h2(c.path);
      assert.equal(overH2.status, 200);
      assert.equal(overH2.cacheStatus, 'Portico; hit');
      assert.equal(overH2.text, first.text);
      assert.deepEqual(c.backendPaths.map(count), before, 'hits make no backend call');
    });

    it(`${c.path}: compressed for a client that accepts gzip, the same JSON once decoded`, async () => {
      const plain = await h1(c.path);
      const zipped = await h1(c.path, { 'accept-encoding': 'gzip' });
      assert.equal(zipped.encoding, 'gzip');
      assert.equal(zipped.text, plain.text);
      const zippedHit = await h1(c.path, { 'accept-encoding': 'gzip' });
      assert.equal(zippedHit.cacheStatus, 'Portico; hit', 'the gzip variant is stored too');
      assert.equal(zippedHit.text, plain.text);
    });
  }
});
