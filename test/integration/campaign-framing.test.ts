/**
 * Request smuggling and framing, client side: a client's bytes are one request to the gateway
 * exactly when they are one request to the backend, answers never go to the wrong request, and a
 * malformed request after a valid one never replaces or aborts the valid one's answer.
 * The backend is a raw TCP server that records every byte and parses strictly
 * (test/support/raw-backend.ts); the client writes raw bytes (test/support/raw-http.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { withRawConnection, type RawConnection, type RawResponse } from '../support/raw-http.js';
import { header, startRawBackend, type ParsedRequest, type RawBackend } from '../support/raw-backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { assertErrorHead } from '../support/error-answer.js';

/** Upper bound for one exchange on the loopback (each exchange takes milliseconds). */
const EXCHANGE_MS = 5_000;
/** Replaced by the backend's port when the request is written. */
const backendPortPlaceholder = '{BACKEND_PORT}';

/** A backend answer held until the test releases it, to keep a request in flight on purpose. */
class Held {
  private readonly waiting: (() => void)[] = [];
  private released = false;
  hold(then: () => void): void {
    if (this.released) then();
    else this.waiting.push(then);
  }
  release(): void {
    this.released = true;
    for (const w of this.waiting.splice(0)) w();
  }
}

function answer(socket: Socket, body: string, extra = ''): void {
  socket.write(
    `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`,
  );
}

let held = new Held();
let backend: RawBackend;
let gw: TestGateway;

before(async () => {
  backend = await startRawBackend((req, socket) => {
    // The body echoes what the backend saw, so a misrouted answer is visible to the client.
    const body = `${req.method} ${req.target} ${req.body.toString('latin1')}`;
    if (req.target === '/slow') held.hold(() => answer(socket, body));
    else if (req.target === '/streaming') {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${body.length + 5}\r\n\r\n${body}`);
      held.hold(() => socket.write('-done'));
    } else answer(socket, body);
  });
  const svc = backend.host;
  gw = await startGateway(`
routes:
  - { method: GET, route: /slow, service: ${svc}, path: /slow }
  - { method: GET, route: /streaming, service: ${svc}, path: /streaming }
  - { method: GET, route: /g, service: ${svc}, path: /g }
  - { method: POST, route: /p, service: ${svc}, path: /p }
  - { method: GET, route: /smuggled, service: ${svc}, path: /SMUGGLED }
  - { method: POST, route: /smuggled, service: ${svc}, path: /SMUGGLED }
`);
});
after(() => closeAll(gw, backend));

/** Requests the backend received from `from` on (indexes into `backend.requests`). */
function seenSince(from: number): ParsedRequest[] {
  return backend.requests.slice(from);
}

const withConnection = <T>(fn: (c: RawConnection) => Promise<T>): Promise<T> => withRawConnection(gw.port, fn);

function assertGatewayError(res: RawResponse, status: number, code: string): void {
  assertErrorHead(res, status, code);
  const body = JSON.parse(res.body) as { success: unknown; error: unknown };
  assert.equal(body.success, false);
  assert.equal(typeof body.error, 'string');
}

/** Writes `bytes` and resolves once the gateway's HTTP parser has refused some of them. */
async function writeUntilParseError(c: RawConnection, bytes: string): Promise<void> {
  const clientError = once(gw.gateway.server, 'clientError');
  c.write(bytes);
  await clientError;
}

/** The 400 a parse error earns, then the gateway closes the connection. */
async function assertBadRequestThenClose(c: RawConnection): Promise<void> {
  assertGatewayError(await c.next(EXCHANGE_MS), 400, 'GW_BAD_REQUEST');
  await c.closed;
}

describe('a parse error after a valid request leaves that request its answer', () => {
  it('pipelined garbage behind a request in flight: 200 first, then 400 and close', async () => {
    held = new Held();
    const from = backend.requests.length;
    await withConnection(async (c) => {
      await writeUntilParseError(
        c,
        'GET /api/slow HTTP/1.1\r\nHost: gw.test\r\nX-Request-ID: first\r\n\r\nBLAH\r\n\r\n',
      );
      // The gateway has seen the garbage while the valid request waits.
      await backend.nextRequest(EXCHANGE_MS);
      held.release();
      const first = await c.next(EXCHANGE_MS);
      assert.equal(first.status, 200);
      assert.equal(first.headers['x-request-id'], 'first');
      assert.equal(first.body, 'GET /slow ');
      await assertBadRequestThenClose(c);
    });
    assert.deepEqual(
      seenSince(from).map((r) => r.target),
      ['/slow'],
    );
  });

  it('garbage while the answer is already streaming: the answer completes, then 400', async () => {
    held = new Held();
    await withConnection(async (c) => {
      c.write('GET /api/streaming HTTP/1.1\r\nHost: gw.test\r\n\r\n');
      await backend.nextRequest(EXCHANGE_MS);
      // The head and first bytes are on their way to the client; only then the garbage.
      await once(c.socket, 'data');
      await writeUntilParseError(c, 'BLAH\r\n\r\n');
      held.release();
      const first = await c.next(EXCHANGE_MS);
      assert.equal(first.status, 200);
      assert.equal(first.body, 'GET /streaming -done');
      await assertBadRequestThenClose(c);
    });
  });

  it('two pipelined requests then garbage: both answers in order, then 400', async () => {
    held = new Held();
    const from = backend.requests.length;
    await withConnection(async (c) => {
      await writeUntilParseError(
        c,
        'GET /api/slow HTTP/1.1\r\nHost: gw.test\r\nX-Request-ID: one\r\n\r\nPOST /api/p HTTP/1.1\r\nHost: gw.test\r\nX-Request-ID: two\r\nContent-Length: 3\r\n\r\nabc\x01\x02\x03 / HTTP/1.1\r\n\r\n',
      );
      held.release();
      const one = await c.next(EXCHANGE_MS);
      const two = await c.next(EXCHANGE_MS);
      assert.deepEqual([one.status, one.headers['x-request-id'], one.body], [200, 'one', 'GET /slow ']);
      assert.deepEqual([two.status, two.headers['x-request-id'], two.body], [200, 'two', 'POST /p abc']);
      await assertBadRequestThenClose(c);
    });
    assert.deepEqual(
      seenSince(from)
        .map((r) => r.target)
        .sort(),
      ['/p', '/slow'],
    );
  });

  it('bytes after a request with Connection: close: its answer, then the connection closes', async () => {
    const from = backend.requests.length;
    await withConnection(async (c) => {
      c.write(
        'POST /api/p HTTP/1.1\r\nHost: gw.test\r\nConnection: close\r\nContent-Length: 3\r\n\r\nabcGET /api/smuggled HTTP/1.1\r\nHost: gw.test\r\n\r\n',
      );
      const res = await c.next(EXCHANGE_MS);
      assert.equal(res.status, 200);
      assert.equal(res.body, 'POST /p abc');
      await c.closed;
      await assert.rejects(c.next(EXCHANGE_MS), /connection closed; got ""/);
    });
    assert.deepEqual(
      seenSince(from).map((r) => `${r.method} ${r.target}`),
      ['POST /p'],
    );
  });

  it('a request whose own body is malformed is answered 400 (after the answers before it)', async () => {
    held = new Held();
    const from = backend.requests.length;
    await withConnection(async (c) => {
      await writeUntilParseError(
        c,
        'GET /api/slow HTTP/1.1\r\nHost: gw.test\r\n\r\nPOST /api/p HTTP/1.1\r\nHost: gw.test\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\n',
      );
      held.release();
      const first = await c.next(EXCHANGE_MS);
      assert.equal(first.status, 200);
      assert.equal(first.body, 'GET /slow ');
      await assertBadRequestThenClose(c);
    });
    // The malformed POST never reaches the backend as a complete request.
    assert.deepEqual(
      seenSince(from).map((r) => r.target),
      ['/slow'],
    );
    assert.deepEqual(backend.framingErrors, []);
  });
});

describe('framing the gateway refuses before any backend call', () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => `X-H${i}: v\r\n`).join('');
  const cases: { name: string; request: string; status: number; code: string; check?: (r: RawResponse) => void }[] = [
    {
      name: 'HTTP/1.0 with Transfer-Encoding',
      request: 'POST /api/p HTTP/1.0\r\nHost: gw.test\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
      status: 400,
      code: 'GW_BAD_REQUEST',
    },
    {
      name: 'Transfer-Encoding: identity, chunked',
      request:
        'POST /api/p HTTP/1.1\r\nHost: gw.test\r\nTransfer-Encoding: identity, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
      status: 501,
      code: 'GW_TRANSFER_CODING_UNSUPPORTED',
    },
    {
      name: 'Transfer-Encoding: gzip, chunked',
      request: 'POST /api/p HTTP/1.1\r\nHost: gw.test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
      status: 501,
      code: 'GW_TRANSFER_CODING_UNSUPPORTED',
    },
    {
      name: 'an HTTP/2.0 request line',
      request: 'GET /api/g HTTP/2.0\r\nHost: gw.test\r\n\r\n',
      status: 505,
      code: 'GW_HTTP_VERSION_UNSUPPORTED',
    },
    {
      name: 'CONNECT',
      request: `CONNECT 127.0.0.1:${backendPortPlaceholder} HTTP/1.1\r\nHost: 127.0.0.1:${backendPortPlaceholder}\r\n\r\n`,
      status: 405,
      code: 'GW_METHOD_UNSUPPORTED',
      check: (r) => assert.match(r.headers.allow ?? '', /GET/),
    },
    {
      name: 'two Host headers',
      request: 'GET /api/g HTTP/1.1\r\nHost: gw.test\r\nHost: evil.test\r\n\r\n',
      status: 400,
      code: 'GW_BAD_HOST',
    },
    {
      name: 'a Host with a path',
      request: 'GET /api/g HTTP/1.1\r\nHost: gw.test/evil\r\n\r\n',
      status: 400,
      code: 'GW_BAD_HOST',
    },
    {
      name: 'a Host with userinfo',
      request: 'GET /api/g HTTP/1.1\r\nHost: user@gw.test\r\n\r\n',
      status: 400,
      code: 'GW_BAD_HOST',
    },
    {
      name: 'HTTP/1.1 without Host',
      request: 'GET /api/g HTTP/1.1\r\nX-A: b\r\n\r\n',
      status: 400,
      code: 'GW_BAD_HOST',
    },
    {
      name: 'Transfer-Encoding after 2,000 other headers',
      request: `POST /api/p HTTP/1.1\r\nHost: gw.test\r\n${many(2000)}Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
      status: 431,
      code: 'GW_HEADERS_TOO_LARGE',
    },
    {
      name: 'Content-Length after 1,000 other headers',
      request: `POST /api/p HTTP/1.1\r\nHost: gw.test\r\n${many(1000)}Content-Length: 3\r\n\r\nabc`,
      status: 431,
      code: 'GW_HEADERS_TOO_LARGE',
    },
    {
      name: 'Content-Length after 2,000 other headers',
      request: `POST /api/p HTTP/1.1\r\nHost: gw.test\r\n${many(2000)}Content-Length: 3\r\n\r\nabc`,
      status: 431,
      code: 'GW_HEADERS_TOO_LARGE',
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.status} ${c.code}, connection closed, backend not called`, async () => {
      const from = backend.requests.length;
      await withConnection(async (conn) => {
        conn.write(c.request.replaceAll(backendPortPlaceholder, String(backend.port)));
        const res = await conn.next(EXCHANGE_MS);
        assertGatewayError(res, c.status, c.code);
        assert.ok(res.headers['x-request-id'], 'carries a request id');
        c.check?.(res);
        await conn.closed;
      });
      assert.deepEqual(seenSince(from), []);
    });
  }

  it('990 header fields and Transfer-Encoding: accepted, the backend gets the body exactly', async () => {
    const from = backend.requests.length;
    await withConnection(async (c) => {
      c.write(
        `POST /api/p HTTP/1.1\r\nHost: gw.test\r\n${many(990)}Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
      );
      const res = await c.next(EXCHANGE_MS);
      assert.equal(res.status, 200);
      assert.equal(res.body, 'POST /p abc');
    });
    assert.equal(seenSince(from).length, 1);
  });

  it('a valid Host with a port, an IPv6 literal or empty on HTTP/1.0 is accepted', async () => {
    for (const host of ['Host: gw.test:8080\r\n', 'Host: [::1]:80\r\n', 'Host: 127.0.0.1\r\n']) {
      await withConnection(async (c) => {
        c.write(`GET /api/g HTTP/1.1\r\n${host}\r\n`);
        assert.equal((await c.next(EXCHANGE_MS)).status, 200, host);
      });
    }
    await withConnection(async (c) => {
      c.write('GET /api/g HTTP/1.0\r\n\r\n');
      assert.equal((await c.next(EXCHANGE_MS)).status, 200);
    });
  });
});

describe('method-override headers', () => {
  it('are never forwarded: a backend honouring them would bypass the route method', async () => {
    const from = backend.requests.length;
    await withConnection(async (c) => {
      c.write(
        'POST /api/p HTTP/1.1\r\nHost: gw.test\r\nX-HTTP-Method-Override: DELETE\r\nX-HTTP-Method: DELETE\r\nx-method-override: PUT\r\nX-Kept: yes\r\nContent-Length: 0\r\n\r\n',
      );
      assert.equal((await c.next(EXCHANGE_MS)).status, 200);
    });
    const seen = seenSince(from);
    assert.equal(seen.length, 1);
    const names = seen[0]!.headers.map(([n]) => n);
    assert.equal(header(seen[0]!, 'x-kept'), 'yes');
    for (const n of ['x-http-method-override', 'x-http-method', 'x-method-override'])
      assert.ok(!names.includes(n), `${n} forwarded`);
  });
});
