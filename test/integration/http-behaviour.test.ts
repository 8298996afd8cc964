/**
 * docs/design-decisions.md "HTTP behaviour" on standard routes: headers both ways, request ids, bodies
 * streamed untouched (large, compressed, empty), https backends, health endpoints.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { json, rawRequest, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';

const MB = 1024 * 1024;
/** Large enough that buffering would show far above the noise of garbage awaiting collection. */
const BIG = 200 * MB;

/**
 * Forwarding headers besides Forwarded and X-Real-IP that proxies and frameworks read: where the
 * request came from, and what its URL, port or scheme was before a proxy. Only a trusted proxy's pass.
 */
const PEER_FORWARDING = {
  'x-forwarded-port': '8443',
  'x-forwarded-prefix': '/admin',
  'x-forwarded-scheme': 'https',
  'x-forwarded-ssl': 'on',
  'x-forwarded-server': 'edge.example',
  'x-forwarded-uri': '/admin/reset',
  'x-original-url': '/admin/reset',
  'x-rewrite-url': '/admin/reset',
  'x-original-host': 'evil.example',
  'true-client-ip': '203.0.113.9',
  'x-client-ip': '203.0.113.9',
  'x-cluster-client-ip': '203.0.113.9',
  'cf-connecting-ip': '203.0.113.9',
  'fastly-client-ip': '203.0.113.9',
  'x-originating-ip': '203.0.113.9',
  'front-end-https': 'on',
};

describe('headers and request ids', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((_req, res) => {
      res.writeHead(200, {
        'content-type': 'text/plain',
        connection: 'keep-alive, x-hop',
        'x-hop': 'backend-private',
        'keep-alive': 'timeout=5',
        'x-request-id': 'backend-made-this-up',
        'set-cookie': ['a=1', 'b=2'],
      });
      res.end('hello');
    });
    gw = await startGateway(
      `routes:\n  - { method: GET, route: /h, service: ${backend.host}, path: /h }\n  - { method: POST, route: /h, service: ${backend.host}, path: /h }`,
    );
  });
  after(async () => {
    await gw?.close();
    await backend?.close();
  });

  it('removes hop-by-hop request headers and sets Host and X-Forwarded-*', async () => {
    const res = await rawRequest(gw.url, '/api/h?x=1', {
      headers: {
        connection: 'keep-alive, x-secret-hop',
        'x-secret-hop': 'drop me',
        te: 'trailers',
        'proxy-authorization': 'Basic x',
        'x-forwarded-for': '203.0.113.9',
        'x-custom': 'kept',
        host: 'gateway.example',
      },
    });
    assert.equal(res.status, 200);
    const seen = backend.seen.at(-1)!;
    assert.equal(seen.headers.host, backend.host);
    assert.equal(seen.headers['x-secret-hop'], undefined);
    assert.equal(seen.headers.te, undefined);
    assert.equal(seen.headers['proxy-authorization'], undefined);
    assert.equal(seen.headers['x-custom'], 'kept');
    // 127.0.0.1 is not a trusted proxy: the address the client claims is replaced, not extended.
    assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen.headers['x-forwarded-proto'], 'http');
    assert.equal(seen.headers['x-forwarded-host'], 'gateway.example');
  });

  it('drops Forwarded and X-Real-IP from a client that is not a trusted proxy', async () => {
    const res = await rawRequest(gw.url, '/api/h', {
      headers: { forwarded: 'for=203.0.113.9', 'x-real-ip': '203.0.113.9' },
    });
    assert.equal(res.status, 200);
    const seen = backend.seen.at(-1)!;
    assert.equal(seen.headers.forwarded, undefined);
    assert.equal(seen.headers['x-real-ip'], undefined);
  });

  it('drops every other forwarding header a client could forge, from a client that is not a trusted proxy', async () => {
    const res = await rawRequest(gw.url, '/api/h', { headers: { ...PEER_FORWARDING, 'x-custom': 'kept' } });
    assert.equal(res.status, 200);
    const seen = backend.seen.at(-1)!;
    for (const name of Object.keys(PEER_FORWARDING)) assert.equal(seen.headers[name], undefined, name);
    assert.equal(seen.headers['x-custom'], 'kept');
  });

  it('extends the X-Forwarded-For of a trusted proxy and passes its Forwarded and X-Real-IP', async () => {
    const trusting = await startGateway(
      `routes:\n  - { method: GET, route: /h, service: ${backend.host}, path: /h }\nconfig: { trustProxy: [loopback] }`,
    );
    try {
      const res = await rawRequest(trusting.url, '/api/h', {
        headers: {
          'x-forwarded-for': '203.0.113.9',
          forwarded: 'for=203.0.113.9',
          'x-real-ip': '203.0.113.9',
          ...PEER_FORWARDING,
        },
      });
      assert.equal(res.status, 200);
      const seen = backend.seen.at(-1)!;
      assert.equal(seen.headers['x-forwarded-for'], '203.0.113.9, 127.0.0.1');
      assert.equal(seen.headers.forwarded, 'for=203.0.113.9');
      assert.equal(seen.headers['x-real-ip'], '203.0.113.9');
      for (const [name, value] of Object.entries(PEER_FORWARDING)) assert.equal(seen.headers[name], value, name);
    } finally {
      await trusting.close();
    }
  });

  it('removes hop-by-hop response headers and keeps repeated ones', async () => {
    const res = await request(`${gw.url}/api/h`);
    assert.equal(await res.body.text(), 'hello');
    assert.equal(res.headers['x-hop'], undefined);
    assert.equal(res.headers['keep-alive'] === 'timeout=5', false);
    assert.deepEqual(res.headers['set-cookie'], ['a=1', 'b=2']);
  });

  it('generates X-Request-ID, returns it and sends the same one to the backend', async () => {
    const res = await request(`${gw.url}/api/h`);
    await res.body.dump();
    const id = res.headers['x-request-id'];
    assert.match(String(id), /^[0-9a-f-]{36}$/);
    assert.equal(backend.seen.at(-1)!.headers['x-request-id'], id);
    assert.ok(
      gw.logs.some(
        (l) =>
          l.msg === 'request' &&
          l.reqId === id &&
          l.route === 'GET /h' &&
          l.status === 200 &&
          typeof l.durationMs === 'number',
      ),
    );
  });

  it("keeps the client's X-Request-ID, and replaces an unusable one", async () => {
    let res = await request(`${gw.url}/api/h`, { headers: { 'x-request-id': 'client-id-1' } });
    await res.body.dump();
    assert.equal(res.headers['x-request-id'], 'client-id-1');
    assert.equal(backend.seen.at(-1)!.headers['x-request-id'], 'client-id-1');
    res = await request(`${gw.url}/api/h`, { headers: { 'x-request-id': 'x'.repeat(300) } });
    await res.body.dump();
    assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  it('gateway errors carry the request id too', async () => {
    const res = await request(`${gw.url}/api/missing`, { headers: { 'x-request-id': 'err-1' } });
    await res.body.dump();
    assert.equal(res.statusCode, 404);
    assert.equal(res.headers['x-request-id'], 'err-1');
  });

  it('forwards a chunked request body (no Content-Length) intact', async () => {
    const res = await request(`${gw.url}/api/h`, {
      method: 'POST',
      body: Readable.from([Buffer.from('ab'), Buffer.from('cd')]),
    });
    await res.body.dump();
    assert.equal(backend.seen.at(-1)!.body.toString(), 'abcd');
  });
});

describe('bodies pass through untouched and streamed', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  const gz = gzipSync(Buffer.from('{"compressed":true}'));
  let uploaded = 0;
  /** Bytes of the big download the backend has handed to its socket so far. */
  let sentBig = 0;
  /** Called when the backend's socket refuses more of the big download (write returned false). */
  let onBigBlocked: (() => void) | undefined;
  before(async () => {
    backend = await startBackend(
      (req, res) => {
        if (req.url === '/big') {
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': BIG });
          const chunk = Buffer.alloc(64 * 1024, 7);
          let sent = 0;
          const pump = () => {
            while (sent < BIG) {
              sent += chunk.length;
              sentBig = sent;
              if (!res.write(chunk)) {
                onBigBlocked?.();
                res.once('drain', pump);
                return;
              }
            }
            res.end();
          };
          pump();
          return;
        }
        if (req.url === '/upload') {
          uploaded = 0;
          req.on('data', (c: Buffer) => (uploaded += c.length));
          req.on('end', () => json(res, 200, { received: uploaded }));
          return;
        }
        if (req.url === '/gzip') {
          res.writeHead(200, {
            'content-type': 'application/json',
            'content-encoding': 'gzip',
            'content-length': gz.length,
          });
          return res.end(gz);
        }
        if (req.url === '/empty') {
          res.writeHead(204, { 'x-empty': '1' });
          return res.end();
        }
        res.writeHead(418, { 'content-type': 'text/html' });
        res.end('<p>teapot</p>');
      },
      { bufferBody: false },
    );
    gw = await startGateway(`routes:
  - { method: GET, route: /big, service: ${backend.host}, path: /big }
  - { method: POST, route: /upload, service: ${backend.host}, path: /upload, requestBuffering: false,
      maxBodyBytes: ${BIG} }
  - { method: GET, route: /gzip, service: ${backend.host}, path: /gzip }
  - { method: GET, route: /empty, service: ${backend.host}, path: /empty }
  - { method: GET, route: /teapot, service: ${backend.host}, path: /teapot }`);
  });
  after(async () => {
    await gw?.close();
    await backend?.close();
  });

  // Streaming means the bytes between the two ends stay bounded by socket and stream buffers
  // (a few MB), whatever the body's size; a buffering gateway holds the whole body. Measured as
  // bytes in flight rather than RSS: garbage Buffers awaiting collection move RSS by 60-120 MB
  // for this body depending on the Node version, though nothing is held.
  it('streams a 200 MB download: bytes in flight stay bounded', async () => {
    const res = await request(`${gw.url}/api/big`);
    assert.equal(res.headers['content-length'], String(BIG));
    let total = 0;
    let inFlight = 0;
    for await (const c of res.body) {
      total += (c as Buffer).length;
      inFlight = Math.max(inFlight, sentBig - total);
    }
    assert.equal(total, BIG);
    assert.ok(inFlight < 32 * MB, `${Math.round(inFlight / MB)} MB in flight for a 200 MB body`);
  });

  it('stops reading from the backend while the client does not read', async () => {
    const blocked = new Promise<void>((resolve) => (onBigBlocked = resolve));
    const res = await request(`${gw.url}/api/big`);
    await blocked;
    // Nothing to await for "nothing happens": a gateway that ignored backpressure would pull
    // the rest of the 200 MB from the backend within this window.
    await new Promise((resolve) => setTimeout(resolve, 300));
    onBigBlocked = undefined;
    const sent = sentBig;
    res.body.destroy();
    assert.ok(sent < 32 * MB, `the backend sent ${Math.round(sent / MB)} MB to a client that read nothing`);
  });

  it('streams a 200 MB upload: bytes in flight stay bounded', async () => {
    const chunk = Buffer.alloc(64 * 1024, 1);
    let produced = 0;
    let inFlight = 0;
    async function* body() {
      for (let i = 0; i < BIG / chunk.length; i++) {
        inFlight = Math.max(inFlight, produced - uploaded);
        produced += chunk.length;
        yield chunk;
      }
    }
    const res = await request(`${gw.url}/api/upload`, {
      method: 'POST',
      body: Readable.from(body()),
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.deepEqual(await res.body.json(), { received: BIG });
    assert.ok(inFlight < 32 * MB, `${Math.round(inFlight / MB)} MB in flight for a 200 MB body`);
  });

  it('passes a gzip body through byte for byte', async () => {
    const res = await request(`${gw.url}/api/gzip`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(res.headers['content-encoding'], 'gzip');
    assert.deepEqual(Buffer.from(await res.body.arrayBuffer()), gz);
  });

  it('passes 204 and a non-JSON error status through', async () => {
    let res = await request(`${gw.url}/api/empty`);
    assert.equal(res.statusCode, 204);
    assert.equal(res.headers['x-empty'], '1');
    assert.equal(await res.body.text(), '');
    res = await request(`${gw.url}/api/teapot`);
    assert.equal(res.statusCode, 418);
    assert.equal(res.headers['content-type'], 'text/html');
    assert.equal(await res.body.text(), '<p>teapot</p>');
  });
});

describe('https backends', () => {
  const tls = fileURLToPath(new URL('../fixtures/tls/', import.meta.url));
  it('proxies to https://host with a configured CA, and refuses an untrusted certificate', async () => {
    const server = createHttpsServer(
      { key: readFileSync(`${tls}server.key`), cert: readFileSync(`${tls}server.crt`) },
      (req, res) => json(res, 200, { secure: true, url: req.url }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const trusted = await startGateway(
      `routes: [{ method: GET, route: /s, service: "https://localhost:${port}", path: /secure }]\nconfig: { upstreamTls: { caFile: "${tls}ca.crt" } }`,
    );
    const untrusted = await startGateway(
      `routes: [{ method: GET, route: /s, service: "https://localhost:${port}", path: /secure }]`,
    );
    try {
      let res = await request(`${trusted.url}/api/s`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(await res.body.json(), { secure: true, url: '/secure' });
      res = await request(`${untrusted.url}/api/s`);
      assert.equal(res.statusCode, 502);
      await res.body.dump();
    } finally {
      await trusted.close();
      await untrusted.close();
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('health and readiness', () => {
  it('GET /health and /ready answer outside basePath', async () => {
    const gw = await startGateway('routes: []');
    try {
      let res = await request(`${gw.url}/health`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(await res.body.json(), { status: 'ok' });
      res = await request(`${gw.url}/ready`);
      assert.equal(res.statusCode, 200);
      await res.body.dump();
    } finally {
      await gw.close();
    }
  });
});
