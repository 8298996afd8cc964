import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { rawConnect, type RawConnection } from '../support/raw-http.js';
import { waitFor } from '../support/wait-for.js';
import { closeAll } from '../support/close-all.js';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const tempBodies = () => readdirSync(tmpdir()).filter((f) => f.startsWith('portico-body-'));

describe('request buffering', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  const arrivals: { url: string; at: number; firstChunkAt?: number }[] = [];
  before(async () => {
    backend = await startBackend(
      (req, res) => {
        const arrival: (typeof arrivals)[number] = { url: req.url ?? '', at: performance.now() };
        arrivals.push(arrival);
        const hash = createHash('sha256');
        let length = 0;
        req.on('data', (c: Buffer) => {
          arrival.firstChunkAt ??= performance.now();
          hash.update(c);
          length += c.length;
        });
        req.on('end', () =>
          json(res, 200, {
            url: req.url,
            length,
            sha: hash.digest('hex'),
            te: req.headers['transfer-encoding'] ?? null,
            cl: req.headers['content-length'] ?? null,
          }),
        );
      },
      { bufferBody: false },
    );
    gw = await startGateway(`
routes:
  - { method: POST, route: /upload, service: ${backend.host}, path: /upload }
  - { method: POST, route: /stream, service: ${backend.host}, path: /stream, requestBuffering: false }
  - { method: GET, route: /ping, service: ${backend.host}, path: /ping }
config:
  limits: { connectionsPerOrigin: 64, requestBufferBytes: 65536 }
  timeouts: { backendSec: 3 }
`);
  });
  after(() => closeAll(gw, backend));

  it('64 trickling uploads hold no backend connection: a GET to the same backend answers at once', async () => {
    const uploads: RawConnection[] = [];
    for (let i = 0; i < 64; i++) {
      const c = await rawConnect(gw.port);
      c.write(`POST /api/upload HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\nx`);
      uploads.push(c);
    }
    try {
      const started = performance.now();
      const res = await request(`${gw.url}/api/ping`);
      assert.equal(res.statusCode, 200);
      await res.body.text();
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 2000, `GET took ${elapsed} ms`);
      assert.equal(
        arrivals.filter((a) => a.url === '/upload').length,
        0,
        'no upload reached the backend before its body was complete',
      );
    } finally {
      for (const c of uploads) c.close();
    }
  });

  it('a chunked body over the memory buffer spills to an unlinked file and arrives whole, with a length', async () => {
    const chunk = Buffer.alloc(256 * 1024, 7);
    const total = Buffer.concat(Array.from({ length: 20 }, (_, i) => Buffer.alloc(chunk.length, i)));
    const res = await request(`${gw.url}/api/upload`, {
      method: 'POST',
      body: Readable.from(
        (function* () {
          for (let i = 0; i < 20; i++) yield total.subarray(i * chunk.length, (i + 1) * chunk.length);
        })(),
      ),
    });
    const body = (await res.body.json()) as { length: number; sha: string; te: string | null; cl: string | null };
    assert.equal(res.statusCode, 200);
    assert.equal(body.length, total.length);
    assert.equal(body.sha, sha(total));
    assert.equal(body.te, null);
    assert.equal(body.cl, String(total.length));
    assert.deepEqual(tempBodies(), []);
  });

  it('a small body is forwarded from memory with its length', async () => {
    const res = await request(`${gw.url}/api/upload`, {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
    });
    const body = (await res.body.json()) as { length: number; sha: string; cl: string | null };
    assert.equal(body.length, 7);
    assert.equal(body.sha, sha('{"a":1}'));
    assert.equal(body.cl, '7');
  });

  it('the backend is called only once the client sent its last byte', async () => {
    const c = await rawConnect(gw.port);
    c.write(`POST /api/upload HTTP/1.1\r\nhost: x\r\ncontent-length: 6\r\n\r\nabc`);
    // The first half is read by the gateway (it answers nothing yet); then the rest follows.
    await new Promise((r) => setTimeout(r, 100));
    const before = arrivals.length;
    const lastByteAt = performance.now();
    c.write('def');
    const res = await c.next();
    c.close();
    assert.equal(res.status, 200);
    assert.equal(arrivals.length, before + 1);
    assert.ok(arrivals.at(-1)!.at >= lastByteAt);
    assert.equal((JSON.parse(res.body) as { sha: string }).sha, sha('abcdef'));
  });

  it('a client leaving mid-upload never reaches the backend and leaves no file behind', async () => {
    const before = arrivals.length;
    const c = await rawConnect(gw.port);
    c.write(`POST /api/upload HTTP/1.1\r\nhost: x\r\ncontent-length: 1000000\r\n\r\n`);
    c.write(Buffer.alloc(200_000, 1)); // past the memory buffer: a temporary file is open
    // A bounded gap for the gateway to take the bytes in: the unlinked file cannot be watched.
    await new Promise((r) => setTimeout(r, 100));
    c.close();
    await once(c.socket, 'close');
    const res = await request(`${gw.url}/api/ping`); // the gateway is still serving
    await res.body.text();
    assert.equal(arrivals.length, before + 1);
    assert.equal(arrivals.at(-1)!.url, '/ping');
    assert.deepEqual(tempBodies(), []);
  });

  it('requestBuffering: false streams the body while the client still sends it', async () => {
    const c = await rawConnect(gw.port);
    c.write(`POST /api/stream HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n`);
    // The backend sees the request and its first chunk before the client has finished.
    await waitFor(
      () => arrivals.some((a) => a.url === '/stream' && a.firstChunkAt !== undefined),
      5_000,
      'the backend seeing the first chunk',
    );
    c.write('3\r\ndef\r\n0\r\n\r\n');
    const res = await c.next();
    c.close();
    assert.equal(res.status, 200);
    const body = JSON.parse(res.body) as { sha: string; te: string | null };
    assert.equal(body.sha, sha('abcdef'));
    assert.equal(body.te, 'chunked');
  });
});

/**
 * A streamed body (requestBuffering: false) is still being sent while the backend waits for it:
 * `timeouts.backendSec`, the wait for the head, runs from the last byte sent, as with undici's own
 * timer; the client's pace is bounded by `timeouts.clientBodySec`.
 */
describe('streamed uploads and backendSec', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend(
      (req, res) => {
        let length = 0;
        req.on('data', (c: Buffer) => (length += c.length));
        // /hold reads the whole body and never answers.
        req.on('end', () => (req.url === '/hold' ? undefined : json(res, 200, { length })));
      },
      { bufferBody: false },
    );
    gw = await startGateway(`
routes:
  - { method: POST, route: /stream, service: ${backend.host}, path: /stream, requestBuffering: false }
  - { method: POST, route: /hold, service: ${backend.host}, path: /hold, requestBuffering: false }
config:
  timeouts: { backendSec: 0.3 }
`);
  });
  after(() => closeAll(gw, backend));

  /** Sends a chunked body of `chunks` 100-byte chunks, `gapMs` apart; resolves when the last went out. */
  async function trickle(c: RawConnection, path: string, chunks: number, gapMs: number): Promise<number> {
    c.write(`POST ${path} HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n`);
    for (let i = 0; i < chunks; i++) {
      c.write(`64\r\n${'u'.repeat(100)}\r\n`);
      await new Promise((r) => setTimeout(r, gapMs));
    }
    c.write('0\r\n\r\n');
    return performance.now();
  }

  it('an upload lasting longer than backendSec is answered, not cut', async () => {
    const c = await rawConnect(gw.port);
    const started = performance.now();
    await trickle(c, '/api/stream', 8, 100);
    const res = await c.next();
    c.close();
    assert.ok(performance.now() - started > 700, 'the upload outlasted backendSec');
    assert.equal(res.status, 200);
    assert.equal((JSON.parse(res.body) as { length: number }).length, 800);
  });

  it('a backend silent after the whole upload gets its 504 backendSec after the last byte', async () => {
    const c = await rawConnect(gw.port);
    const sent = await trickle(c, '/api/hold', 5, 100);
    const res = await c.next();
    const waited = performance.now() - sent;
    c.close();
    assert.equal(res.status, 504);
    assert.equal(res.headers['x-portico-error'], 'GW_UPSTREAM_TIMEOUT');
    assert.ok(waited >= 250 && waited < 1_500, `504 came ${waited} ms after the last byte`);
  });
});
