/**
 * The drain of a stopping gateway (docs/lifecycle.md "Stopping"), seen by its clients: nothing
 * that may carry a request is cut, every client is told to leave (Connection: close, GOAWAY; the
 * WebSocket close 1001 is in websocket.test.ts), and a gateway with nothing to finish stops soon
 * after its drain delay.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect as h2connect, constants } from 'node:http2';
import { connect } from 'node:net';
import { startBackend, json, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { rawConnect, type RawConnection } from '../support/raw-http.js';
import { h2request } from '../support/http2.js';
import { closeAll } from '../support/close-all.js';
import { waitFor } from '../support/wait-for.js';
import { QUIET_MS } from '../../src/setup/drain.js';

const GET = (path: string) => `GET ${path} HTTP/1.1\r\nHost: gw\r\n\r\n`;

/** Resolves true when a connection to `port` is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** A raw connection that records whether it was reset rather than closed. */
async function watched(port: number): Promise<RawConnection & { reset: () => boolean }> {
  const conn = await rawConnect(port);
  let wasReset = false;
  conn.socket.on('error', (err: NodeJS.ErrnoException) => (wasReset ||= err.code === 'ECONNRESET'));
  return Object.assign(conn, { reset: () => wasReset });
}

describe('drain: HTTP/1.1 connections', () => {
  let backend: TestBackend | undefined;
  let gw: TestGateway | undefined;
  afterEach(() => closeAll(gw, backend));

  const start = async () => {
    backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    gw = await startGateway(`routes: [{ method: GET, route: /a, service: ${backend.host}, path: /a }]`);
    return gw;
  };

  it('a request sent on an idle keep-alive connection as the drain starts is answered, with Connection: close', async () => {
    const gw = await start();
    const conn = await watched(gw.port);
    conn.write(GET('/api/a'));
    assert.equal((await conn.next()).status, 200);
    const closing = gw.gateway.close();
    // Already on its way when the gateway decided to stop: the client could not have known.
    conn.write(GET('/api/a'));
    const late = await conn.next();
    assert.equal(late.status, 200);
    assert.equal(late.headers.connection, 'close');
    await conn.closed;
    assert.equal(conn.reset(), false, 'closed, not reset');
    await closing;
  });

  it('an idle connection that stays quiet is closed cleanly after the quiet period; the close takes under 1 s', async () => {
    const gw = await start();
    const conn = await watched(gw.port);
    conn.write(GET('/api/a'));
    assert.equal((await conn.next()).status, 200);
    const started = performance.now();
    const closing = gw.gateway.close();
    await conn.closed;
    const closedAfter = performance.now() - started;
    await closing;
    const elapsed = performance.now() - started;
    assert.ok(closedAfter >= QUIET_MS - 5, `closed after ${Math.round(closedAfter)} ms, not at once`);
    assert.ok(elapsed < 1_000, `close() took ${Math.round(elapsed)} ms`);
    assert.equal(conn.reset(), false, 'closed, not reset');
  });

  it('idle connections stay open while the client still sends on its others, each answered then closed', async () => {
    const gw = await start();
    const pool = await Promise.all(Array.from({ length: 6 }, () => watched(gw.port)));
    for (const conn of pool) {
      conn.write(GET('/api/a'));
      assert.equal((await conn.next()).status, 200);
    }
    const closing = gw.gateway.close();
    // A load balancer walking its pool of keep-alive connections, one request every 100 ms: the
    // last ones are picked after more than QUIET_MS of their own silence.
    for (const conn of pool) {
      await new Promise((r) => setTimeout(r, 100));
      conn.write(GET('/api/a'));
      const answer = await conn.next();
      assert.deepEqual([answer.status, answer.headers.connection], [200, 'close']);
      await conn.closed;
    }
    await closing;
    assert.deepEqual(
      pool.map((c) => c.reset()),
      pool.map(() => false),
    );
  });

  it('with a drain delay: /ready 503 at once, every connection served with Connection: close, then refused', async () => {
    const gw = await start();
    const kept = await watched(gw.port);
    kept.write(GET('/api/a'));
    assert.equal((await kept.next()).headers.connection, 'keep-alive');
    const idle = await watched(gw.port);
    const started = performance.now();
    const closing = gw.gateway.close({ drainDelayMs: 1_000 });
    const ready = await gw.get('/ready');
    assert.equal(ready.status, 503);
    kept.write(GET('/api/a'));
    const onKept = await kept.next();
    assert.deepEqual([onKept.status, onKept.headers.connection], [200, 'close']);
    await kept.closed;
    // A new connection during the delay is served too, and told.
    const fresh = await gw.get('/api/a');
    assert.deepEqual([fresh.status, fresh.headers.connection], [200, 'close']);
    // A connection in the second half of the delay: the operator is told nothing in front reads /ready.
    await waitFor(() => performance.now() - started > 600, 1_000, 'the second half of the delay');
    assert.equal((await gw.get('/api/a')).status, 200);
    await closing;
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 1_000, `stopped after ${Math.round(elapsed)} ms, within the delay`);
    assert.ok(elapsed < 2_000, `close() took ${Math.round(elapsed)} ms: over 1 s past the delay`);
    assert.ok(
      gw.logs.some((l) => l.level === 40 && l.newConnections === 1),
      'new connections late in the delay',
    );
    await idle.closed;
    assert.equal(idle.reset(), false, 'the connection that never sent a byte was closed, not reset');
    assert.equal(await refused(gw.port), true);
  });
});

describe('drain: HTTP/2 clients', () => {
  let backend: TestBackend | undefined;
  let gw: TestGateway | undefined;
  afterEach(() => closeAll(gw, backend));

  // A stream refused or reset would reject its h2request.
  it('during the delay an HTTP/2 session gets GOAWAY, its streams finish, and a new session is served then told', async () => {
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    backend = await startBackend(async (req, res) => {
      if (req.url === '/slow') await held;
      json(res, 200, { path: req.url });
    });
    gw = await startGateway(`
config: { http2: { cleartext: true } }
routes:
  - { method: GET, route: /slow, service: ${backend.host}, path: /slow }
  - { method: GET, route: /fast, service: ${backend.host}, path: /fast }
`);
    const first = h2connect(gw.url);
    let second: ReturnType<typeof h2connect> | undefined;
    try {
      const slow = h2request(first, '/api/slow');
      await once(backend.server, 'request');
      const goaway = once(first, 'goaway');
      const closing = gw.gateway.close({ drainDelayMs: 400 });
      assert.equal(((await goaway) as [number])[0], constants.NGHTTP2_NO_ERROR);
      // A session opened during the delay: its request is answered, and the session told to go.
      second = h2connect(gw.url);
      const told = once(second, 'goaway');
      const fast = await h2request(second, '/api/fast');
      assert.equal(fast.status, 200);
      assert.equal(((await told) as [number])[0], constants.NGHTTP2_NO_ERROR);
      release();
      const answer = await slow;
      assert.deepEqual([answer.status, JSON.parse(answer.body)], [200, { path: '/slow' }]);
      await closing;
    } finally {
      release();
      first.destroy();
      second?.destroy();
    }
  });
});
