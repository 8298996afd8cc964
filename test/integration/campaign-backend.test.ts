/**
 * Hostile backends, through a plain route and a mapped route: answers no well-behaved server
 * sends (smuggled second responses, bad framing, invalid header bytes, resets, 1xx, huge or
 * compressed-bomb bodies, hostile JSON). Pass = every client gets its own answer or the gateway's
 * JSON error, never another request's answer; memory stays bounded; the process never crashes and
 * serves the next request. The backend is a raw TCP server (test/support/raw-backend.ts) that
 * writes exactly the bytes each case names.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { createGzip } from 'node:zlib';
import { request } from 'undici';
import { rawConnect } from '../support/raw-http.js';
import { startRawBackend, type ParsedRequest, type RawBackend } from '../support/raw-backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';

const MB = 1024 * 1024;
/** limits.maxMappingBodyBytes of the test gateway: small, so the limits are reached quickly. */
const MAX_MAPPING_BYTES = 256 * 1024;
/** What the kernel and the streams may hold between the backend and the gateway's reader. */
const SOCKET_SLACK = 32 * MB;
const BIG = 200 * MB;

/** The smuggled "second response" a case tries to slip after its first one. */
const SMUGGLED = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 8\r\n\r\nSMUGGLED';

const ok = (body: string, extra = '') =>
  `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
const okJson = (body: string) =>
  `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

/**
 * Response heads and bodies that desynchronise a lenient reader: after each comes SMUGGLED, so a
 * gateway that read the framing differently from the strict reading would hand SMUGGLED to the
 * next request on the pooled connection.
 */
const DESYNC: Record<string, string> = {
  'cl-and-te': 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  'two-cl-different': 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\nhello',
  'two-cl-same': 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello',
  'cl-list': 'HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello',
  'cl-plus': 'HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello',
  'cl-negative': 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n',
  'cl-hex': 'HTTP/1.1 200 OK\r\nContent-Length: 0x5\r\n\r\nhello',
  'te-xchunked': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n',
  'te-chunked-chunked': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n',
  'te-quoted': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: "chunked"\r\n\r\n0\r\n\r\n',
  'te-space-before-colon': 'HTTP/1.1 200 OK\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n',
  'te-folded': 'HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n',
  'te-vertical-tab': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: \vchunked\r\n\r\n0\r\n\r\n',
  'chunk-size-bad': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n',
  'chunk-size-overflow': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000005\r\nhello\r\n0\r\n\r\n',
  'chunk-size-negative': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n',
  'chunk-bare-lf': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\n0\n\n',
  'chunk-extension-lf': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\nc\r\nhello\r\n0\r\n\r\n',
  'head-bare-lf': 'HTTP/1.1 200 OK\nContent-Length: 5\n\nhello',
  'head-bare-cr': 'HTTP/1.1 200 OK\rContent-Length: 5\r\n\r\nhello',
};

/** Heads Node must not or cannot relay. */
const INVALID_HEADS: Record<string, string> = {
  'nul-in-value': 'HTTP/1.1 200 OK\r\nX-Bad: a\0b\r\nContent-Length: 2\r\n\r\nok',
  'space-in-name': 'HTTP/1.1 200 OK\r\nX Bad: a\r\nContent-Length: 2\r\n\r\nok',
  'del-in-value': 'HTTP/1.1 200 OK\r\nX-Bad: a\x7fb\r\nContent-Length: 2\r\n\r\nok',
  'no-reason-bad-status': 'HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nok',
  'not-http': 'SSH-2.0-OpenSSH_9.6\r\n\r\n',
  // A 1xx is skipped (backend-informational.test.ts), and what follows it is read as the answer.
  'continue-then-not-http': 'HTTP/1.1 100 Continue\r\n\r\nSSH-2.0-OpenSSH_9.6\r\n\r\n',
};

/** What the backend does for each target; `/echo...` answers the target itself. */
function behave(req: ParsedRequest, socket: Socket): void {
  const [, kind, name] = req.target.split('/');
  if (kind === 'echo' || kind === undefined) return void socket.write(ok(req.target));
  if (kind === 'desync') return void socket.write(DESYNC[name!]! + SMUGGLED);
  if (kind === 'invalid') return void socket.write(INVALID_HEADS[name!]!);
  if (kind === 'items') return void socket.write(okJson(items(name!)));
  const special = SPECIAL[name!];
  if (special === undefined) throw new Error(`no case ${req.target}`);
  special(socket, req);
}

/** Counts of what the big-body cases managed to write before the gateway stopped reading. */
const pushed: Record<string, number> = {};
let gzipBomb: Buffer;
let gzipJsonBomb: Buffer;

/** Writes `total` bytes of `chunk` repeated (chunked encoding), honouring backpressure. */
function pour(socket: Socket, key: string, total: number, head: string, chunk: Buffer): void {
  pushed[key] = 0;
  socket.write(head);
  const step = () => {
    while (pushed[key]! < total) {
      const n = Math.min(chunk.length, total - pushed[key]!);
      pushed[key]! += n;
      socket.write(`${n.toString(16)}\r\n`);
      socket.write(n === chunk.length ? chunk : chunk.subarray(0, n));
      if (!socket.write('\r\n')) return void socket.once('drain', step);
    }
    socket.write('0\r\n\r\n');
  };
  socket.on('error', () => {});
  step();
}

const items = (m: string) =>
  `[{"id":1,"m":"${m}"},{"id":9007199254740993,"m":"echo-json","n":1.0000000000000000001e400}]`;

const SPECIAL: Record<string, (socket: Socket, req: ParsedRequest) => void> = {
  // RFC 9110 8.6: a 304 may carry the Content-Length of the 200 it stands for.
  'not-modified': (s) =>
    s.write('HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\nContent-Length: 1234\r\nCache-Control: max-age=60\r\n\r\n'),
  'no-content-with-length': (s) => s.write('HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n'),
  'no-content-stray-body': (s) => s.write(`HTTP/1.1 204 No Content\r\n\r\n${SMUGGLED}`),
  'early-hints': (s) => s.write(`HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n${ok('after hints')}`),
  'reset-mid-body': (s) => {
    s.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[{"id":1,');
    s.resetAndDestroy();
  },
  'big-plain': (s) =>
    pour(
      s,
      'big-plain',
      BIG,
      'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      Buffer.alloc(64 * 1024, 0x20),
    ),
  'big-mapping-call': (s) =>
    pour(
      s,
      'big-mapping-call',
      BIG,
      'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      Buffer.alloc(64 * 1024, 0x20),
    ),
  'gzip-bomb-call': (s) =>
    s.write(
      `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: ${gzipJsonBomb.length}\r\n\r\n`,
    ) && s.write(gzipJsonBomb),
  'gzip-bomb-primary': (s) =>
    s.write(
      `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: ${gzipBomb.length}\r\n\r\n`,
    ) && s.write(gzipBomb),
  'deep-json': (s) => s.write(okJson(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)),
  'deep-object': (s) => s.write(okJson(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`)),
  'invalid-json': (s) => s.write(okJson('{"a": [1, 2,, }')),
  'proto-keys': (s) =>
    s.write(okJson('{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"ok":1}')),
  'big-numbers': (s) => s.write(okJson('{"big":12345678901234567890123,"exact":9007199254740993,"tiny":1e-400}')),
  'echo-json': (s, req) => s.write(okJson(JSON.stringify({ target: req.target }))),
  'reset-call': (s) => {
    s.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"half":');
    s.resetAndDestroy();
  },
};

let backend: RawBackend;
let gw: TestGateway;

/** A gzip stream of `total` bytes: `prefix`, then spaces, then `suffix`. */
async function gzipOf(prefix: string, total: number, suffix: string): Promise<Buffer> {
  const gz = createGzip({ level: 1 });
  const out: Buffer[] = [];
  gz.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((r) => gz.on('end', r));
  const spaces = Buffer.alloc(MB, 0x20);
  gz.write(prefix);
  for (let n = 0; n < total; n += spaces.length) if (!gz.write(spaces)) await new Promise((r) => gz.once('drain', r));
  gz.end(suffix);
  await done;
  return Buffer.concat(out);
}

before(async () => {
  gzipJsonBomb = await gzipOf('{"a":"', BIG, '"}');
  gzipBomb = await gzipOf('[{"id":1,"m":"echo-json","pad":"', BIG, '"}]');
  // A bomb: 200 MB of JSON in well under 1 MB on the wire.
  assert.ok(gzipJsonBomb.length < MB && gzipBomb.length < MB);
  backend = await startRawBackend(behave);
  const svc = backend.host;
  gw = await startGateway(`
routes:
  - { method: GET, route: "/plain/{kind}/{name}", service: ${svc}, path: "/{kind}/{name}" }
  - { method: GET, route: "/mapped/{kind}/{name}", service: ${svc}, path: "/{kind}/{name}",
      mapping: [{ path: "/special/{m}", service: ${svc}, tag: extra }] }
  - { method: GET, route: "/items/{m}", service: ${svc}, path: "/items/{m}", mapping: [{ path: "/special/{m}", service: ${svc}, tag: extra }] }
config:
  limits: { maxMappingBodyBytes: ${MAX_MAPPING_BYTES} }
  timeouts: { backendSec: 5, mappingSec: 5 }
`);
});
after(() => closeAll(gw, backend));

/** Status and body of a GET, status 0 when the response was cut short. */
async function outcome(path: string): Promise<{ status: number; body: string }> {
  try {
    const res = await gw.get(path);
    return { status: res.status, body: res.body.toString() };
  } catch (err) {
    return { status: 0, body: (err as Error).message };
  }
}

/** Polls `read` until it stops changing (the writer is blocked by backpressure) or ends past the slack. */
async function settled(read: () => number): Promise<number> {
  let last = -1;
  for (;;) {
    const now = read();
    if (now === last || now >= MAX_MAPPING_BYTES + SOCKET_SLACK || now >= BIG) return now;
    last = now;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The gateway still answers: its own answer, for its own request. */
async function assertStillServing(): Promise<void> {
  const res = await gw.get('/api/plain/echo/after');
  assert.equal(res.status, 200);
  assert.equal(res.body.toString(), '/echo/after');
}

describe('304 and 204 from the backend', () => {
  it('a 304 with Content-Length is relayed as a 304: headers kept, no body, connection kept alive', async () => {
    const c = await rawConnect(gw.port);
    try {
      c.write('GET /api/plain/special/not-modified HTTP/1.1\r\nHost: gw.test\r\nIf-None-Match: "v1"\r\n\r\n');
      const res = await c.next(5_000);
      assert.equal(res.status, 304);
      assert.equal(res.headers.etag, '"v1"');
      assert.equal(res.headers['content-length'], '1234');
      assert.equal(res.headers['cache-control'], 'max-age=60');
      assert.notEqual(res.headers.connection, 'close');
      // Same connection: the next answer is the next request's, so no body bytes were sent.
      c.write('GET /api/plain/echo/next HTTP/1.1\r\nHost: gw.test\r\n\r\n');
      const next = await c.next(5_000);
      assert.equal(next.status, 200);
      assert.equal(next.body, '/echo/next');
    } finally {
      c.close();
    }
  });

  it('a 204 with Content-Length is relayed as a 204 without it', async () => {
    const c = await rawConnect(gw.port);
    try {
      c.write('GET /api/plain/special/no-content-with-length HTTP/1.1\r\nHost: gw.test\r\n\r\n');
      const res = await c.next(5_000);
      assert.equal(res.status, 204);
      assert.equal(res.headers['content-length'], undefined);
      c.write('GET /api/plain/echo/next HTTP/1.1\r\nHost: gw.test\r\n\r\n');
      assert.equal((await c.next(5_000)).body, '/echo/next');
    } finally {
      c.close();
    }
  });

  it('a 204 followed by stray bytes: 204, and the stray bytes answer no one', async () => {
    const res = await gw.get('/api/plain/special/no-content-stray-body');
    assert.equal(res.status, 204);
    for (let i = 0; i < 5; i++) {
      const next = await gw.get(`/api/plain/echo/n${i}`);
      assert.equal(next.body.toString(), `/echo/n${i}`);
    }
  });
});

describe('response smuggling and desync from the backend', () => {
  const cases = ['plain', 'mapped'].flatMap((r) => Object.keys(DESYNC).map((n) => [r, n] as const));
  for (const [route, name] of cases) {
    it(`${route} route, ${name}: refused (502 or the connection cut), and no client ever gets the smuggled response`, async () => {
      const first = await outcome(`/api/${route}/desync/${name}`);
      assert.ok(!first.body.includes('SMUGGLED'), first.body);
      if (first.status !== 0) {
        assert.equal(first.status, 502, first.body);
        assert.deepEqual(JSON.parse(first.body), { error: 'Backend service unreachable', success: false });
      }
      // Whatever became of the pooled connection, the next requests get their own answers.
      const next = await Promise.all([0, 1, 2].map((i) => gw.get(`/api/plain/echo/${name}-${i}`)));
      next.forEach((r, i) => assert.equal(r.body.toString(), `/echo/${name}-${i}`));
    });
  }
});

describe('invalid response heads', () => {
  for (const [route, name] of ['plain', 'mapped'].flatMap((r) =>
    Object.keys(INVALID_HEADS).map((n) => [r, n] as const),
  )) {
    it(`${route} route, ${name}: 502 JSON, and the gateway keeps serving`, async () => {
      const res = await gw.get(`/api/${route}/invalid/${name}`);
      assert.equal(res.status, 502, res.body.toString());
      assert.deepEqual(JSON.parse(res.body.toString()), { error: 'Backend service unreachable', success: false });
      await assertStillServing();
    });
  }

  it('a 103 Early Hints before the answer: the answer arrives, the hint is not forwarded', async () => {
    const res = await gw.get('/api/plain/special/early-hints');
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), 'after hints');
  });
});

describe('hostile bodies on a plain route and a mapped route', () => {
  it('reset mid-body: the client sees the failure (never a complete-looking answer)', async () => {
    for (const route of ['plain', 'mapped']) {
      const res = await outcome(`/api/${route}/special/reset-mid-body`);
      // Mapped: the body is read before the head goes out, so the answer is a clean 502.
      if (route === 'mapped') assert.equal(res.status, 502, res.body);
      else assert.equal(res.status, 0, `${route}: ${JSON.stringify(res)}`);
    }
    await assertStillServing();
  });

  it(
    'a 200 MB primary on a mapped route streams through unchanged, backpressure kept',
    { timeout: 60_000 },
    async () => {
      const res = await request(`${gw.url}/api/mapped/special/big-plain`);
      assert.equal(res.statusCode, 200);
      // The client reads nothing yet: the backend can push only what the gateway holds plus buffers.
      const whilePaused = await settled(() => pushed['big-plain']!);
      assert.ok(
        whilePaused < MAX_MAPPING_BYTES + SOCKET_SLACK,
        `backend pushed ${whilePaused} bytes while the client read nothing`,
      );
      let total = 0;
      let allSpaces = true;
      const spaces = Buffer.alloc(MB, 0x20);
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        total += chunk.length;
        for (let at = 0; allSpaces && at < chunk.length; at += spaces.length) {
          const part = chunk.subarray(at, at + spaces.length);
          allSpaces = part.equals(spaces.subarray(0, part.length));
        }
      }
      assert.equal(total, BIG);
      assert.ok(allSpaces);
    },
  );

  it(
    'a 200 MB answer to a mapping call: the item goes out untagged, the call read stops near the limit',
    { timeout: 60_000 },
    async () => {
      const res = await gw.get('/api/items/big-mapping-call');
      assert.equal(res.status, 200);
      const out = JSON.parse(res.body.toString()) as Record<string, unknown>[];
      assert.equal(out[0]!.extra, undefined);
      assert.deepEqual(out[1]!.extra, { target: '/special/echo-json' });
      assert.ok(
        pushed['big-mapping-call']! < MAX_MAPPING_BYTES + SOCKET_SLACK,
        `backend pushed ${pushed['big-mapping-call']} bytes`,
      );
    },
  );

  it('a gzip bomb from a mapping call: the item goes out untagged', async () => {
    const res = await gw.get('/api/items/gzip-bomb-call');
    assert.equal(res.status, 200);
    const out = JSON.parse(res.body.toString()) as Record<string, unknown>[];
    assert.equal(out[0]!.extra, undefined);
    assert.deepEqual(out[1]!.extra, { target: '/special/echo-json' });
  });

  it('a gzip bomb as the mapped primary: the compressed body is returned unchanged', async () => {
    const res = await gw.get('/api/mapped/special/gzip-bomb-primary', { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-encoding'], 'gzip');
    assert.ok(res.body.equals(gzipBomb), 'body changed');
  });

  it('JSON 100,000 deep from a mapping call and as a primary: no crash, answered', async () => {
    for (const name of ['deep-json', 'deep-object']) {
      const call = await gw.get(`/api/items/${name}`);
      assert.equal(call.status, 200);
      const out = JSON.parse(call.body.toString()) as Record<string, unknown>[];
      assert.deepEqual(out[1]!.extra, { target: '/special/echo-json' });
      const primary = await gw.get(`/api/mapped/special/${name}`);
      assert.equal(primary.status, 200);
      assert.equal(primary.body.length, 200_000 + (name === 'deep-object' ? 400_001 : 0));
    }
    await assertStillServing();
  });

  it('invalid JSON from a mapping call: item untagged; as a primary: returned unchanged', async () => {
    const call = await gw.get('/api/items/invalid-json');
    const out = JSON.parse(call.body.toString()) as Record<string, unknown>[];
    assert.equal(out[0]!.extra, undefined);
    assert.deepEqual(out[1]!.extra, { target: '/special/echo-json' });
    const primary = await gw.get('/api/mapped/special/invalid-json');
    assert.equal(primary.body.toString(), '{"a": [1, 2,, }');
  });

  it('__proto__ and constructor keys: kept as data, no prototype pollution', async () => {
    const res = await gw.get('/api/items/proto-keys');
    assert.equal(res.status, 200);
    const text = res.body.toString();
    assert.ok(text.includes('"extra":{"__proto__":{"polluted":"yes"}'), text);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
    const primary = await gw.get('/api/mapped/special/proto-keys');
    assert.equal(
      primary.body.toString(),
      '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"ok":1}',
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('numbers past 2^53 stay exact in the output bytes, in the primary and in a tag', async () => {
    const res = await gw.get('/api/items/big-numbers');
    const text = res.body.toString();
    assert.ok(text.includes('"id":9007199254740993'), text);
    assert.ok(text.includes('"n":1.0000000000000000001e400'), text);
    assert.ok(text.includes('"extra":{"big":12345678901234567890123,"exact":9007199254740993,"tiny":1e-400}'), text);
  });

  it('a mapping call reset mid-body: the item goes out untagged', async () => {
    const res = await gw.get('/api/items/reset-call');
    assert.equal(res.status, 200);
    const out = JSON.parse(res.body.toString()) as Record<string, unknown>[];
    assert.equal(out[0]!.extra, undefined);
    assert.deepEqual(out[1]!.extra, { target: '/special/echo-json' });
  });
});
