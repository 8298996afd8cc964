/**
 * tainha-gateway's client deadlines: `readTimeoutSec` bounds receiving the whole request (408
 * even for a body that trickles in steadily), `writeTimeoutSec` disconnects a client that takes
 * none of a waiting response, and never cuts a stream that is merely idle.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { once } from 'node:events';
import { request } from 'undici';
import { startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { rawConnect } from '../support/raw-http.js';
import { closeAll } from '../support/close-all.js';

const READ_SEC = 1;
const WRITE_SEC = 0.5;
/** The server checks deadlines on a tick (a quarter of the limit); scheduling adds the rest. */
const SLACK_MS = 1_500;

describe('config.readTimeoutSec and config.writeTimeoutSec', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let bigResponseClosed: Promise<{ finished: boolean; at: number }> | undefined;
  let sseSecondEventSent: (() => void) | undefined;
  before(async () => {
    backend = await startBackend(
      (req, res) => {
        if (req.url === '/big') {
          bigResponseClosed = new Promise((resolve) =>
            res.once('close', () => resolve({ finished: res.writableFinished, at: performance.now() })),
          );
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          const chunk = Buffer.alloc(64 * 1024, 120);
          let sent = 0;
          const pump = () => {
            // Respects backpressure: only a client that reads lets this go on.
            while (sent < 256 * 1024 * 1024 && !res.destroyed) {
              sent += chunk.length;
              if (!res.write(chunk)) return void res.once('drain', pump);
            }
            res.end();
          };
          pump();
          return;
        }
        if (req.url === '/events') {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          res.write('data: first\n\n');
          // Silent for three write limits: an idle stream has nothing waiting, so it is not cut.
          setTimeout(
            () => {
              res.end('data: second\n\n');
              sseSecondEventSent?.();
            },
            3 * WRITE_SEC * 1000,
          );
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      },
      { bufferBody: true },
    );
    gw = await startGateway(`
routes:
  - { method: POST, route: /upload, service: "${backend.host}", path: /upload }
  - { method: GET, route: /big, service: "${backend.host}", path: /big }
  - { method: GET, route: /events, service: "${backend.host}", path: /events, isSSE: true }
config:
  readTimeoutSec: ${READ_SEC}
  writeTimeoutSec: ${WRITE_SEC}
`);
  });
  after(() => closeAll(gw, backend));

  it('answers 408 to a body that trickles in past readTimeoutSec, though it is never silent', async () => {
    const conn = await rawConnect(gw.port);
    const started = performance.now();
    conn.write(`POST /api/upload HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n`);
    // One byte every 100 ms: far under clientBodySec's silence limit, so only the deadline applies.
    const trickle = setInterval(() => conn.write('x'), 100);
    try {
      const res = await conn.next(READ_SEC * 1000 + SLACK_MS * 2);
      const elapsed = performance.now() - started;
      assert.equal(res.status, 408);
      assert.deepEqual(JSON.parse(res.body), { error: JSON.parse(res.body).error, success: false });
      assert.ok(elapsed >= READ_SEC * 1000 - 50, `408 after ${elapsed.toFixed(0)} ms`);
      assert.ok(elapsed < READ_SEC * 1000 + SLACK_MS, `408 after ${elapsed.toFixed(0)} ms`);
    } finally {
      clearInterval(trickle);
      conn.close();
    }
    assert.equal(backend.seen.filter((r) => r.url === '/upload').length, 0);
  });

  it('a request that arrives in time is served', async () => {
    const res = await request(`${gw.url}/api/upload`, { method: 'POST', body: 'hello' });
    assert.equal(res.statusCode, 200);
    await res.body.text();
  });

  it('disconnects a client that stops reading a response for writeTimeoutSec', async () => {
    const socket = connect(gw.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.on('error', () => {});
    socket.write('GET /api/big HTTP/1.1\r\nHost: x\r\n\r\n');
    // Never reads: the kernel buffers fill, then the gateway's write buffer stalls.
    socket.pause();
    try {
      const deadline = WRITE_SEC * 1000 + SLACK_MS * 4;
      const closed = await Promise.race([
        (async () => {
          while (bigResponseClosed === undefined) await new Promise((r) => setImmediate(r));
          return bigResponseClosed;
        })(),
        new Promise<undefined>((r) => setTimeout(() => r(undefined), deadline).unref()),
      ]);
      assert.ok(closed !== undefined, `the response was still being written after ${deadline} ms`);
      // Cut, not completed: the backend's stream was aborted with most of the body unsent.
      assert.equal(closed.finished, false);
    } finally {
      socket.destroy();
    }
  });

  it('keeps an idle SSE stream open longer than writeTimeoutSec', async () => {
    const sent = new Promise<void>((r) => (sseSecondEventSent = r));
    const res = await request(`${gw.url}/api/events`);
    assert.equal(res.statusCode, 200);
    const body = await res.body.text();
    await sent;
    assert.equal(body, 'data: first\n\ndata: second\n\n');
  });
});
