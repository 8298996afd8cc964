/**
 * Response mapping end to end (docs/design-decisions.md "Response mapping"), with real
 * local services: enrichment, placeholders, lossless output, failures, unchanged primaries,
 * compressed primaries, dedupe and concurrency. The cache has its own file (mapping-cache.test.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request } from 'undici';
import { closedPort, json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { get } from '../support/http.js';
import { closeAll } from '../support/close-all.js';

interface Reply {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body: string | Buffer;
  /** Send without Content-Length (chunked). */
  readonly chunked?: boolean;
}

/** A primary backend that answers each path with the reply registered for it. */
async function startPrimary(): Promise<{ backend: TestBackend; replies: Map<string, Reply> }> {
  const replies = new Map<string, Reply>();
  const backend = await startBackend((req, res) => {
    const r = replies.get(req.url ?? '');
    if (r === undefined) return json(res, 599, { error: `no reply for ${req.url}` });
    const body = typeof r.body === 'string' ? Buffer.from(r.body) : r.body;
    const headers = { 'content-type': 'application/json', ...r.headers };
    if (r.chunked === true) {
      res.writeHead(r.status ?? 200, headers);
      res.write(body.subarray(0, 10));
      res.end(body.subarray(10));
    } else {
      res.writeHead(r.status ?? 200, { ...headers, 'content-length': String(body.length) });
      res.end(body);
    }
  });
  return { backend, replies };
}

/** `/users/{id}` -> `{"name":"user<id>"}` (id as decoded from the URL; ids starting `missing` 404), `/users/{id}/profile`, `/orgs/{org}/users/{id}`. */
function usersHandler(req: IncomingMessage, res: ServerResponse): void {
  // Not new URL(): it would resolve an encoded `%2E%2E` segment.
  const parts = (req.url ?? '/').split('?')[0]!.split('/').slice(1).map(decodeURIComponent);
  if (parts[1]?.startsWith('missing') === true) return json(res, 404, { error: 'no such user' });
  if (parts[0] === 'users' && parts.length === 2) return json(res, 200, { name: `user${parts[1]}` });
  if (parts[0] === 'users' && parts[2] === 'profile') return json(res, 200, { bio: `bio${parts[1]}` });
  if (parts[0] === 'orgs' && parts[2] === 'users') return json(res, 200, { org: parts[1], user: parts[3] });
  json(res, 404, { error: 'not found' });
}

/** `/comments?postId=X` -> `[{"postId":"X"}]` */
function commentsHandler(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  json(res, 200, [{ postId: url.searchParams.get('postId') }]);
}

const urls = (b: TestBackend) => b.seen.map((s) => s.url);

describe('mapping: enrichment of items', () => {
  let primary: Awaited<ReturnType<typeof startPrimary>>;
  let users: TestBackend;
  let comments: TestBackend;
  let gw: TestGateway;
  before(async () => {
    primary = await startPrimary();
    users = await startBackend(usersHandler);
    comments = await startBackend(commentsHandler);
    gw = await startGateway(`
routes:
  - method: GET
    route: "/raw/{name}"
    service: ${primary.backend.host}
    path: "/raw/{name}"
    mapping:
      - path: "/users/{authorId}"
        service: ${users.host}
        tag: author
        removeKeyMapping: true
      - path: "/comments?postId={id}"
        service: http://${comments.host}
        tag: comments
  - { method: GET, route: /profiles, service: ${primary.backend.host}, path: /profiles,
      mapping: [{ path: "/users/{authorId}/profile", service: ${users.host}, tag: profile }] }
  - { method: GET, route: /members, service: ${primary.backend.host}, path: /members,
      mapping: [{ path: "/orgs/{org}/users/{authorId}", service: ${users.host}, tag: member, removeKeyMapping: true }] }
  - method: GET
    route: /twins
    service: ${primary.backend.host}
    path: /twins
    mapping:
      - path: "/users/{authorId}"
        service: ${users.host}
        tag: author
      - path: "/users/{writerId}"
        service: ${users.host}
        tag: writer
  - { method: POST, route: /things, service: ${primary.backend.host}, path: /things,
      mapping: [{ path: "/users/{authorId}", service: ${users.host}, tag: author }] }
`);
  });
  after(() => closeAll(gw, primary?.backend, users, comments));
  const reset = () => {
    users.seen.length = 0;
    comments.seen.length = 0;
  };

  it('array of objects: path style with removeKeyMapping and query style, exact bytes and Content-Length', async () => {
    reset();
    primary.replies.set('/raw/list', { body: '[{"id":1,"title":"A","authorId":7},{"id":2,"title":"B","authorId":8}]' });
    const res = await get(`${gw.url}/api/raw/list`);
    const expected =
      '[{"id":1,"title":"A","author":{"name":"user7"},"comments":[{"postId":"1"}]},' +
      '{"id":2,"title":"B","author":{"name":"user8"},"comments":[{"postId":"2"}]}]';
    assert.equal(res.status, 200);
    assert.equal(res.text, expected);
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(expected)));
    assert.equal(res.headers['transfer-encoding'], undefined);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.deepEqual(urls(users).sort(), ['/users/7', '/users/8']);
    assert.deepEqual(urls(comments).sort(), ['/comments?postId=1', '/comments?postId=2']);
    assert.equal(primary.backend.seen.at(-1)?.headers['accept-encoding'], 'identity');
  });

  it('a single object is enriched too', async () => {
    reset();
    primary.replies.set('/raw/one', { body: '{"id":5,"authorId":2}' });
    const res = await get(`${gw.url}/api/raw/one`);
    assert.equal(res.status, 200);
    assert.equal(res.text, '{"id":5,"author":{"name":"user2"},"comments":[{"postId":"5"}]}');
    assert.equal(users.seen.length, 1);
    assert.equal(comments.seen.length, 1);
  });

  it('a placeholder in the middle of the path, and several placeholders in one path', async () => {
    reset();
    primary.replies.set('/profiles', { body: '[{"authorId":3}]' });
    primary.replies.set('/members', { body: '[{"org":"acme","authorId":4,"x":1}]' });
    const profiles = await get(`${gw.url}/api/profiles`);
    assert.equal(profiles.text, '[{"authorId":3,"profile":{"bio":"bio3"}}]');
    const members = await get(`${gw.url}/api/members`);
    // removeKeyMapping removes every field named by the path's placeholders.
    assert.equal(members.text, '[{"x":1,"member":{"org":"acme","user":"4"}}]');
    assert.deepEqual(urls(users), ['/users/3/profile', '/orgs/acme/users/4']);
  });

  it('a rule with several placeholders is skipped when one does not resolve', async () => {
    reset();
    primary.replies.set('/members', { body: '[{"org":"acme"},{"authorId":4},{"org":null,"authorId":4}]' });
    const res = await get(`${gw.url}/api/members`);
    assert.equal(res.text, '[{"org":"acme"},{"authorId":4},{"org":null,"authorId":4}]');
    assert.equal(users.seen.length, 0);
  });

  it('values are used as text exactly as JSON wrote them, percent-encoded', async () => {
    reset();
    const items = [
      '1000000',
      '12345678901234567890',
      '-5',
      '1.50',
      '1e5',
      'true',
      '"a b/c"',
      '"\\u00fc&x=1"',
      '"..' + '"',
      '"..\\/x"',
    ];
    primary.replies.set('/raw/values', { body: `[${items.map((v) => `{"authorId":${v}}`).join(',')}]` });
    const res = await get(`${gw.url}/api/raw/values`);
    assert.equal(res.status, 200);
    // Dot-segment values are never sent: the service might decode and normalise them.
    assert.deepEqual(urls(users).sort(), [
      '/users/%C3%BC%26x%3D1',
      '/users/-5',
      '/users/1.50',
      '/users/1000000',
      '/users/12345678901234567890',
      '/users/1e5',
      '/users/a%20b%2Fc',
      '/users/true',
    ]);
    const out = JSON.parse(res.text) as { authorId: unknown; author?: { name: string } }[];
    assert.deepEqual(
      out.slice(0, -2).map((i) => i.author?.name),
      [
        'user1000000',
        'user12345678901234567890',
        'user-5',
        'user1.50',
        'user1e5',
        'usertrue',
        'usera b/c',
        'userü&x=1',
      ],
    );
    assert.deepEqual(out.slice(-2), [{ authorId: '..' }, { authorId: '../x' }]);
    assert.ok(gw.logs.some((l) => l.skipped === 2 && String(l.msg).includes('dot-segment')));
  });

  it('missing, null, object and array values skip the rule silently; other rules go on', async () => {
    reset();
    const body = '[{"id":1},{"authorId":null},{"authorId":{"x":1}},{"authorId":[1]},{"id":null,"authorId":false}]';
    primary.replies.set('/raw/skips', { body });
    const logsBefore = gw.logs.length;
    const res = await get(`${gw.url}/api/raw/skips`);
    assert.equal(res.status, 200);
    assert.equal(
      res.text,
      '[{"id":1,"comments":[{"postId":"1"}]},{"authorId":null},{"authorId":{"x":1}},{"authorId":[1]},{"id":null,"author":{"name":"userfalse"}}]',
    );
    assert.deepEqual(urls(users), ['/users/false']);
    assert.deepEqual(urls(comments), ['/comments?postId=1']);
    assert.equal(gw.logs.slice(logsBefore).filter((l) => l.msg === 'mapping failed').length, 0);
  });

  it('lossless: big integers, number text, key order, unicode, escapes and whitespace survive exactly', async () => {
    reset();
    const body = `[
  {
    "id": 12345678901234567890,
    "title": "h\\u00e9llo \\"q\\" ✓ 日本 😀",
    "price": 1.50, "exp": 1E+5, "neg": -0.0,
    "authorId": 1000000,
    "nested": {"n": [1, 2, {"x": "}]"}], "big": 98765432109876543210},
    "last": null
  }
]`;
    primary.replies.set('/raw/lossless', { body });
    const res = await get(`${gw.url}/api/raw/lossless`);
    const expected = `[
  {
    "id": 12345678901234567890,
    "title": "h\\u00e9llo \\"q\\" ✓ 日本 😀",
    "price": 1.50, "exp": 1E+5, "neg": -0.0,
    "nested": {"n": [1, 2, {"x": "}]"}], "big": 98765432109876543210},
    "last": null,"author":{"name":"user1000000"},"comments":[{"postId":"12345678901234567890"}]
  }
]`;
    assert.equal(res.text, expected);
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(expected)));
    assert.deepEqual(urls(users), ['/users/1000000']);
    assert.deepEqual(urls(comments), ['/comments?postId=12345678901234567890']);
  });

  it('an existing key named like the tag keeps its place and gets the mapped value', async () => {
    reset();
    primary.replies.set('/raw/existing', { body: '{"author":"old","authorId":1,"z":0}' });
    const res = await get(`${gw.url}/api/raw/existing`);
    assert.equal(res.text, '{"author":{"name":"user1"},"z":0}');
  });

  it('one fetch per distinct URL within a response: 100 items over 5 values -> 5 calls', async () => {
    reset();
    const items = Array.from({ length: 100 }, (_, i) => `{"n":${i},"authorId":${i % 5}}`);
    primary.replies.set('/raw/many', { body: `[${items.join(',')}]` });
    const res = await get(`${gw.url}/api/raw/many`);
    assert.equal(res.status, 200);
    assert.equal(users.seen.length, 5);
    assert.deepEqual(urls(users).sort(), ['/users/0', '/users/1', '/users/2', '/users/3', '/users/4']);
    const parsed = JSON.parse(res.text) as { n: number; author: { name: string } }[];
    assert.equal(parsed.length, 100);
    for (const item of parsed) assert.equal(item.author.name, `user${item.n % 5}`);
  });

  it('two rules that build the same URL share one call', async () => {
    reset();
    primary.replies.set('/twins', { body: '[{"authorId":1,"writerId":1},{"authorId":2,"writerId":1}]' });
    const res = await get(`${gw.url}/api/twins`);
    assert.equal(
      res.text,
      '[{"authorId":1,"writerId":1,"author":{"name":"user1"},"writer":{"name":"user1"}},{"authorId":2,"writerId":1,"author":{"name":"user2"},"writer":{"name":"user1"}}]',
    );
    assert.deepEqual(urls(users).sort(), ['/users/1', '/users/2']);
  });

  it('mapping calls are GETs that carry X-Request-ID and no client credentials', async () => {
    reset();
    primary.replies.set('/raw/creds', { body: '{"authorId":9}' });
    const res = await get(`${gw.url}/api/raw/creds`, {
      headers: {
        authorization: 'Bearer secret',
        cookie: 'sid=1',
        'x-request-id': 'rid-map-1',
        'accept-encoding': 'gzip',
      },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-request-id'], 'rid-map-1');
    const call = users.seen[0]!;
    assert.equal(users.seen.length, 1);
    assert.equal(call.method, 'GET');
    assert.equal(call.headers['x-request-id'], 'rid-map-1');
    assert.equal(call.headers.authorization, undefined);
    assert.equal(call.headers.cookie, undefined);
    const primarySaw = primary.backend.seen.at(-1)!;
    assert.equal(
      primarySaw.headers.authorization,
      'Bearer secret',
      'the primary request is forwarded like a standard route',
    );
    assert.equal(primarySaw.headers['x-request-id'], 'rid-map-1');
    assert.equal(primarySaw.headers['accept-encoding'], 'identity');
  });

  it('a POST route with mapping forwards the body and enriches the answer, status kept', async () => {
    reset();
    primary.replies.set('/things', { status: 201, body: '{"id":3,"authorId":1}' });
    const res = await request(`${gw.url}/api/things`, {
      method: 'POST',
      body: '{"name":"x"}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.statusCode, 201);
    assert.equal(await res.body.text(), '{"id":3,"authorId":1,"author":{"name":"user1"}}');
    assert.equal(primary.backend.seen.at(-1)?.body.toString(), '{"name":"x"}');
  });

  it('HEAD on a mapped GET route is forwarded without mapping calls', async () => {
    reset();
    primary.replies.set('/raw/head', { body: '{"authorId":1}' });
    const res = await request(`${gw.url}/api/raw/head`, { method: 'HEAD' });
    assert.equal(res.statusCode, 200);
    assert.equal(await res.body.text(), '');
    assert.equal(primary.backend.seen.at(-1)?.method, 'HEAD');
    assert.equal(users.seen.length, 0);
  });

  describe('compressed primary bodies are decoded before parsing', () => {
    const plain = '[{"id":1,"authorId":2}]';
    const enriched = '[{"id":1,"author":{"name":"user2"},"comments":[{"postId":"1"}]}]';
    const cases: { name: string; encoding: string; encode: (b: Buffer) => Buffer }[] = [
      { name: 'gzip', encoding: 'gzip', encode: (b) => gzipSync(b) },
      { name: 'br', encoding: 'br', encode: (b) => brotliCompressSync(b) },
      { name: 'deflate (zlib)', encoding: 'deflate', encode: (b) => deflateSync(b) },
      { name: 'deflate (raw)', encoding: 'deflate', encode: (b) => deflateRawSync(b) },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        reset();
        const path = `/raw/enc-${c.name.replace(/\W/g, '')}`;
        primary.replies.set(path, {
          headers: { 'content-encoding': c.encoding, etag: '"v1"' },
          body: c.encode(Buffer.from(plain)),
        });
        const res = await get(gw.url + '/api' + path, { headers: { 'accept-encoding': 'gzip, br' } });
        assert.equal(res.status, 200);
        assert.equal(res.text, enriched);
        assert.equal(res.headers['content-encoding'], undefined);
        assert.equal(res.headers.etag, undefined, 'the backend ETag does not describe the enriched body');
        assert.equal(res.headers['content-length'], String(Buffer.byteLength(enriched)));
      });
    }

    it('a compressed body with nothing to map is returned as it came, still compressed', async () => {
      reset();
      const raw = gzipSync(Buffer.from('[{"x":1}]'));
      primary.replies.set('/raw/enc-nothing', { headers: { 'content-encoding': 'gzip' }, body: raw });
      const res = await request(`${gw.url}/api/raw/enc-nothing`);
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-encoding'], 'gzip');
      assert.deepEqual(Buffer.from(await res.body.arrayBuffer()), raw);
      assert.equal(users.seen.length + comments.seen.length, 0);
    });
  });
});

describe('mapping: unchanged primary responses', () => {
  let primary: Awaited<ReturnType<typeof startPrimary>>;
  let users: TestBackend;
  let gw: TestGateway;
  before(async () => {
    primary = await startPrimary();
    users = await startBackend(usersHandler);
    gw = await startGateway(`
routes:
  - { method: GET, route: "/raw/{name}", service: ${primary.backend.host}, path: "/raw/{name}",
      mapping: [{ path: "/users/{authorId}", service: ${users.host}, tag: author, removeKeyMapping: true }] }
config:
  limits:
    maxMappingBodyBytes: 2048
`);
  });
  after(() => closeAll(gw, primary?.backend, users));

  const big = `[${Array.from({ length: 100 }, (_, i) => `{"n":${i},"authorId":1}`).join(',')}]`;
  const cases: { name: string; reply: Reply }[] = [
    { name: '404 JSON', reply: { status: 404, body: '{"authorId":1,"error":"nope"}' } },
    { name: '500 JSON', reply: { status: 500, body: '[{"authorId":1}]' } },
    {
      name: '201 text/html',
      reply: { status: 201, headers: { 'content-type': 'text/html' }, body: '<p>{"authorId":1}</p>' },
    },
    {
      name: 'JSON text sent as text/plain',
      reply: { headers: { 'content-type': 'text/plain' }, body: '{"authorId":1}' },
    },
    { name: 'invalid JSON', reply: { body: '{"authorId":1' } },
    { name: 'trailing garbage', reply: { body: '{"authorId":1} x' } },
    { name: 'a number', reply: { body: '42' } },
    { name: 'a string', reply: { body: '"authorId"' } },
    { name: 'null', reply: { body: 'null' } },
    { name: 'an array of numbers', reply: { body: '[1,2,3]' } },
    { name: 'an array mixing objects and numbers', reply: { body: '[{"authorId":1},2]' } },
    { name: 'an array of arrays', reply: { body: '[[{"authorId":1}]]' } },
    { name: 'an empty array', reply: { body: '[]' } },
    { name: 'an empty body', reply: { body: '' } },
    { name: 'larger than maxMappingBodyBytes (Content-Length)', reply: { body: big } },
    { name: 'larger than maxMappingBodyBytes (chunked)', reply: { body: big, chunked: true } },
    {
      name: 'gzip that decodes past maxMappingBodyBytes',
      reply: { headers: { 'content-encoding': 'gzip' }, body: gzipSync(Buffer.from(big)) },
    },
    { name: 'unknown content-encoding', reply: { headers: { 'content-encoding': 'zstd' }, body: '{"authorId":1}' } },
    {
      name: 'invalid UTF-8',
      reply: {
        body: Buffer.from([
          0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x2c, 0x22, 0x61, 0x75, 0x74, 0x68, 0x6f, 0x72, 0x49, 0x64,
          0x22, 0x3a, 0x31, 0x7d,
        ]),
      },
    },
  ];
  for (const [i, c] of cases.entries()) {
    it(`${c.name}: status, headers and body as the backend sent them`, async () => {
      const path = `/raw/case${i}`;
      primary.replies.set(path, c.reply);
      const before = users.seen.length;
      const res = await request(`${gw.url}/api${path}`);
      const body = Buffer.from(await res.body.arrayBuffer());
      assert.equal(res.statusCode, c.reply.status ?? 200);
      assert.deepEqual(body, typeof c.reply.body === 'string' ? Buffer.from(c.reply.body) : c.reply.body);
      assert.equal(res.headers['content-type'], c.reply.headers?.['content-type'] ?? 'application/json');
      assert.equal(res.headers['content-encoding'], c.reply.headers?.['content-encoding']);
      assert.equal(users.seen.length, before, 'no mapping call');
    });
  }

  it('204 without a body', async () => {
    primary.replies.set('/raw/nocontent', { status: 204, body: '' });
    const res = await request(`${gw.url}/api/raw/nocontent`);
    assert.equal(res.statusCode, 204);
    assert.equal(await res.body.text(), '');
  });

  it('a body just under the limit is still enriched', async () => {
    const body = `[${Array.from({ length: 60 }, (_, i) => `{"n":${i}}`).join(',')},{"authorId":1}]`;
    assert.ok(body.length < 2048);
    primary.replies.set('/raw/under', { body });
    const res = await get(`${gw.url}/api/raw/under`);
    assert.equal(res.text, body.replace('{"authorId":1}', '{"author":{"name":"user1"}}'));
  });
});

describe('mapping: failed mapping calls', () => {
  let primary: Awaited<ReturnType<typeof startPrimary>>;
  let users: TestBackend;
  let flaky: TestBackend;
  let refusedPort: number;
  let gw: TestGateway;
  before(async () => {
    primary = await startPrimary();
    users = await startBackend(usersHandler);
    flaky = await startBackend((req, res) => {
      const mode = (req.url ?? '').split('/')[2];
      if (mode === '500') return json(res, 500, { error: 'boom' });
      if (mode === '404') return json(res, 404, { error: 'nope' });
      if (mode === 'slow') return; // never answers
      if (mode === 'text') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return void res.end('hello');
      }
      if (mode === 'badjson') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('{"a":');
      }
      json(res, 200, { mode });
    });
    refusedPort = await closedPort();
    gw = await startGateway(`
routes:
  - method: GET
    route: /items
    service: ${primary.backend.host}
    path: /items
    mapping:
      - path: "/fail/{mode}"
        service: ${flaky.host}
        tag: data
        removeKeyMapping: true
      - path: "/users/{authorId}"
        service: ${users.host}
        tag: author
        removeKeyMapping: true
  - method: GET
    route: /refused
    service: ${primary.backend.host}
    path: /items
    mapping:
      - path: "/x/{mode}"
        service: 127.0.0.1:${refusedPort}
        tag: gone
        removeKeyMapping: true
      - path: "/users/{authorId}"
        service: ${users.host}
        tag: author
config:
  timeouts:
    mappingSec: 0.3
`);
  });
  after(() => closeAll(gw, primary?.backend, users, flaky));

  it('5xx, 4xx, timeout and non-JSON answers leave the item without the tag, keep the key, log a warning; the other rule goes on; 200', async () => {
    const modes = ['500', '404', 'slow', 'text', 'badjson', 'ok'];
    primary.replies.set('/items', { body: `[${modes.map((m, i) => `{"mode":"${m}","authorId":${i}}`).join(',')}]` });
    const logsBefore = gw.logs.length;
    const started = Date.now();
    const res = await get(`${gw.url}/api/items`, { headers: { 'x-request-id': 'rid-fail' } });
    const elapsed = Date.now() - started;
    assert.equal(res.status, 200);
    assert.ok(elapsed < 2000, `mappingSec bounds the wait (${elapsed} ms)`);
    const expected = modes.map((m, i) =>
      m === 'ok' ? `{"data":{"mode":"ok"},"author":{"name":"user5"}}` : `{"mode":"${m}","author":{"name":"user${i}"}}`,
    );
    assert.equal(res.text, `[${expected.join(',')}]`);
    // One warning for the rule, however many of its calls failed: the items it left untagged,
    // the failed calls, the first failure's URL and reason, and the calls counted by reason.
    const warnings = gw.logs.slice(logsBefore).filter((l) => l.msg === 'mapping failed');
    assert.equal(warnings.length, 1);
    const w = warnings[0]!;
    assert.deepEqual(
      { level: w.level, reqId: w.reqId, route: w.route, tag: w.tag, items: w.items, calls: w.calls },
      { level: 40, reqId: 'rid-fail', route: 'GET /items', tag: 'data', items: 5, calls: 5 },
    );
    assert.deepEqual(w.reasons, {
      'status 500': 1,
      'status 404': 1,
      timeout: 1,
      'non-JSON content-type text/plain': 1,
      'non-JSON body': 1,
    });
    assert.match(String(w.url), new RegExp(`^${flaky.url}/fail/`));
    assert.equal((w.reasons as Record<string, number>)[String(w.reason)], 1, 'reason is one of the failures');
  });

  it('connection refused: no tag, warning, other rule set, 200', async () => {
    primary.replies.set('/items', { body: '[{"mode":"a","authorId":1}]' });
    const logsBefore = gw.logs.length;
    const res = await get(`${gw.url}/api/refused`);
    assert.equal(res.status, 200);
    assert.equal(res.text, '[{"mode":"a","authorId":1,"author":{"name":"user1"}}]');
    const warnings = gw.logs.slice(logsBefore).filter((l) => l.msg === 'mapping failed');
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!.url, `http://127.0.0.1:${refusedPort}/x/a`);
    assert.equal(warnings[0]!.reason, 'refused');
    assert.equal(warnings[0]!.tag, 'gone');
  });

  it('the primary response is returned even when every mapping fails', async () => {
    primary.replies.set('/items', { body: '[{"mode":"500","authorId":"missing/x"}]' });
    const res = await get(`${gw.url}/api/items`);
    assert.equal(res.status, 200);
    assert.equal(res.text, '[{"mode":"500","authorId":"missing/x"}]');
  });
});

describe('mapping: primary request failures are answered like a standard route', () => {
  it('502 JSON when the primary backend refuses the connection', async () => {
    const port = await closedPort();
    const gw = await startGateway(`
routes:
  - { method: GET, route: /x, service: 127.0.0.1:${port}, path: /x,
      mapping: [{ path: "/users/{id}", service: 127.0.0.1:${port}, tag: user }] }
`);
    try {
      const res = await request(`${gw.url}/api/x`);
      assert.equal(res.statusCode, 502);
      assert.equal(res.headers['x-portico-error'], 'GW_UPSTREAM_UNREACHABLE');
      assert.deepEqual(await res.body.json(), { error: 'Backend service unreachable', success: false });
      assert.ok(gw.logs.some((l) => l.msg === 'upstream error' && l.kind === 'refused'));
    } finally {
      await gw.close();
    }
  });

  it('504 JSON when the primary backend sends no headers within timeouts.backendSec', async () => {
    const backend = await startBackend(() => {
      /* never answers */
    });
    const gw = await startGateway(`
routes:
  - { method: GET, route: /x, service: ${backend.host}, path: /x,
      mapping: [{ path: "/users/{id}", service: ${backend.host}, tag: user }] }
config:
  timeouts:
    backendSec: 0.3
`);
    try {
      const res = await request(`${gw.url}/api/x`);
      assert.equal(res.statusCode, 504);
      assert.equal(res.headers['x-portico-error'], 'GW_UPSTREAM_TIMEOUT');
      assert.deepEqual(await res.body.json(), { error: 'Backend service did not answer in time', success: false });
      assert.equal(backend.seen.length, 1);
    } finally {
      await closeAll(gw, backend);
    }
  });
});

describe('mapping: concurrency', () => {
  it('the mapping calls of 10 items are in flight at the same time', async () => {
    const primary = await startPrimary();
    const held: (() => void)[] = [];
    // Answers only once all ten calls have arrived: calls made one after another never get there.
    const slow = await startBackend((req, res) => {
      held.push(() => json(res, 200, { url: req.url }));
      if (held.length === 10) for (const answer of held) answer();
    });
    const gw = await startGateway(`
routes:
  - { method: GET, route: /items, service: ${primary.backend.host}, path: /items,
      mapping: [{ path: "/slow/{id}", service: ${slow.host}, tag: slow }] }
`);
    try {
      primary.replies.set('/items', { body: `[${Array.from({ length: 10 }, (_, i) => `{"id":${i}}`).join(',')}]` });
      const res = await get(`${gw.url}/api/items`);
      assert.equal(res.status, 200);
      assert.equal(slow.seen.length, 10);
      assert.deepEqual(
        (JSON.parse(res.text) as { slow: { url: string } }[]).map((i) => i.slow.url),
        Array.from({ length: 10 }, (_, i) => `/slow/${i}`),
      );
    } finally {
      await closeAll(gw, primary.backend, slow);
    }
  });
});

describe('mapping: a client that leaves', () => {
  it('cancels the mapping calls made only for it (cache off)', async () => {
    const primary = await startPrimary();
    const silent = await startBackend(() => {
      /* never answers */
    });
    const gw = await startGateway(`
routes:
  - { method: GET, route: /items, service: ${primary.backend.host}, path: /items,
      mapping: [{ path: "/never/{id}", service: ${silent.host}, tag: never }] }
`);
    try {
      primary.replies.set('/items', { body: '[{"id":1}]' });
      const arrived = new Promise<IncomingMessage>((resolve) => silent.server.once('request', resolve));
      const abort = new AbortController();
      const client = request(`${gw.url}/api/items`, { signal: abort.signal }).catch((err: unknown) => err);
      const mappingReq = await arrived;
      const closed = new Promise<void>((resolve) => mappingReq.socket.once('close', () => resolve()));
      abort.abort();
      assert.ok((await client) instanceof Error);
      await closed;
      assert.equal(silent.seen.length, 1, 'one call, closed by the gateway before any answer');
    } finally {
      await closeAll(gw, primary.backend, silent);
    }
  });
});
