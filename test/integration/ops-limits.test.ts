/**
 * Client limits that must not hurt well-behaved clients: the body timeout ends when the body is
 * complete (a slow backend is bounded by backendSec, not clientBodySec), and errors Node finds
 * before a request exists still carry an X-Request-ID.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { rawConnect, withRawConnection } from '../support/raw-http.js';
import { gatewayForSuite } from '../support/suite-gateway.js';
import { closeAll } from '../support/close-all.js';
import { assertErrorHead } from '../support/error-answer.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('a complete request waiting longer than clientBodySec', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    // Answers 1.5 s after the whole body arrived: longer than clientBodySec, within backendSec.
    backend = await startBackend((_req, res, body) =>
      setTimeout(() => json(res, 200, { got: body.toString('utf8') }), 1_500),
    );
    gw = await startGateway(`
routes:
  - { method: POST, route: /slow, service: ${backend.host}, path: /slow }
config:
  limits:
    connectionsPerOrigin: 1
  timeouts:
    clientBodySec: 1
    backendSec: 5
`);
  });
  after(() => closeAll(gw, backend));

  it('gets its 200 when the body followed the head in a second packet (raw client)', async () => {
    const conn = await rawConnect(gw.port);
    try {
      conn.write('POST /api/slow HTTP/1.1\r\nHost: gw.test\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n');
      // A gap so the body reaches the gateway after the head, in its own packet: nothing to await.
      await new Promise((r) => setTimeout(r, 50));
      conn.write('hello');
      const res = await conn.next(5_000);
      assert.equal(res.status, 200);
      assert.deepEqual(JSON.parse(res.body), { got: 'hello' });
      assert.equal(backend.seen.length, 1);
    } finally {
      conn.close();
    }
  });

  it('gets its 200 while queued behind another request for the one backend connection', async () => {
    const before = backend.seen.length;
    const send = async (body: string) => {
      const conn = await rawConnect(gw.port);
      try {
        conn.write(
          `POST /api/slow HTTP/1.1\r\nHost: gw.test\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n`,
        );
        // A gap so the body reaches the gateway after the head, in its own packet: nothing to await.
        await new Promise((r) => setTimeout(r, 50));
        conn.write(body);
        return await conn.next(8_000);
      } finally {
        conn.close();
      }
    };
    // The second body is complete at once but waits ~1.5 s, unread, for the pool's connection.
    const [first, second] = await Promise.all([send('first'), send('second')]);
    assert.equal(first.status, 200);
    assert.deepEqual(JSON.parse(first.body), { got: 'first' });
    assert.equal(second.status, 200);
    assert.deepEqual(JSON.parse(second.body), { got: 'second' });
    assert.equal(backend.seen.length, before + 2);
  });

  it('gets its 200 with an ordinary client (undici)', async () => {
    const res = await request(`${gw.url}/api/slow`, {
      method: 'POST',
      body: 'small body',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(await res.body.json(), { got: 'small body' });
  });
});

describe('errors Node detects before a request exists', () => {
  const s = gatewayForSuite(
    (backend) => `
routes:
  - { method: GET, route: /a, service: ${backend.host}, path: /a }
config:
  limits:
    maxHeaderBytes: 2048
  timeouts:
    clientHeaderSec: 1
`,
  );

  const cases = [
    {
      name: 'malformed HTTP: 400',
      request: 'GET /api/a HTTP/1.1\r\nHost gw.test\r\n\r\n',
      status: 400,
      code: 'GW_BAD_REQUEST',
      message: 'Malformed HTTP request',
    },
    {
      name: 'a head not complete within clientHeaderSec: 408',
      request: 'GET /api/a HTTP/1.1\r\nHost: gw.test\r\nX-Slow: ',
      status: 408,
      code: 'GW_CLIENT_TIMEOUT',
      message: 'Request not received in time',
    },
    {
      name: 'a head over maxHeaderBytes: 431',
      request: `GET /api/a HTTP/1.1\r\nHost: gw.test\r\nX-Big: ${'x'.repeat(4096)}\r\n\r\n`,
      status: 431,
      code: 'GW_HEADERS_TOO_LARGE',
      message: 'Request headers too large',
    },
  ];
  for (const c of cases) {
    it(`answers ${c.name} in the JSON shape with a generated X-Request-ID`, async () => {
      await withRawConnection(s.gw.port, async (conn) => {
        conn.write(c.request);
        const res = await conn.next();
        assertErrorHead(res, c.status, c.code);
        assert.equal(res.headers.connection, 'close');
        assert.match(res.headers['x-request-id'] ?? '', UUID);
        assert.deepEqual(JSON.parse(res.body), { error: c.message, success: false });
        await conn.closed;
        assert.equal(s.backend.seen.length, 0);
      });
    });
  }
});
