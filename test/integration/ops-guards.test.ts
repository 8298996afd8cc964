/**
 * Guards: rate limiting (429 + headers, trusted proxies), CORS (preflight and actual request),
 * request limits (body size, slow clients, header size) through the real gateway.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { json, rawRequest, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { gatewayForSuite } from '../support/suite-gateway.js';
import { closeAll } from '../support/close-all.js';

/** Writes raw bytes and resolves with everything the server sent until it closed. */
function rawExchange(
  port: number,
  chunks: (string | Buffer)[],
  options: { gapMs?: number; endAfter?: boolean } = {},
): Promise<{ text: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket: Socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', (err) =>
      text === '' ? reject(err) : resolve({ text, closedAfterMs: performance.now() - started }),
    );
    socket.on('close', () => resolve({ text, closedAfterMs: performance.now() - started }));
    socket.on('connect', async () => {
      for (const c of chunks) {
        if (socket.destroyed) return;
        socket.write(c);
        if (options.gapMs) await new Promise((r) => setTimeout(r, options.gapMs));
      }
      if (options.endAfter) socket.end();
    });
  });
}

function statusOf(raw: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
}

function bodyOf(raw: string): unknown {
  const i = raw.indexOf('\r\n\r\n');
  return JSON.parse(raw.slice(i + 4));
}

describe('rate limiting', () => {
  const s = gatewayForSuite(
    (backend) => `
routes:
  - { method: GET, route: /limited, service: ${backend.host}, path: /limited }
  - { method: GET, route: /strict, service: ${backend.host}, path: /strict,
      rateLimit: { requestsPerSec: 0.5, burst: 1 } }
  - { method: GET, route: /free, service: ${backend.host}, path: /free, rateLimit: { enabled: false } }
config:
  rateLimit:
    enabled: true
    requestsPerSec: 1
    burst: 3
  trustProxy: [10.0.0.0/8]
`,
  );

  it('admits the burst with RateLimit headers, then answers 429 with Retry-After without calling the backend', async () => {
    const seen = s.backend.seen.length;
    // A different X-Forwarded-For each time changes nothing: 127.0.0.1 is not a trusted proxy.
    const answers = [];
    for (let i = 0; i < 4; i++)
      answers.push(await rawRequest(s.gw.url, '/api/limited', { headers: { 'x-forwarded-for': `203.0.113.${i}` } }));
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 429],
    );
    assert.deepEqual(
      answers.slice(0, 3).map((a) => a.headers['ratelimit-remaining']),
      ['2', '1', '0'],
    );
    assert.equal(answers[0]!.headers['ratelimit-limit'], '3');
    const refused = answers[3]!;
    assert.deepEqual(JSON.parse(refused.body), { error: 'Too many requests', success: false });
    assert.equal(refused.headers['content-type'], 'application/json');
    assert.equal(refused.headers['x-portico-error'], 'GW_RATE_LIMITED');
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.headers['ratelimit-limit'], '3');
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    assert.equal(refused.headers['ratelimit-reset'], '3');
    assert.equal(s.backend.seen.length, seen + 3);
  });

  it("shares the bucket across routes, keeps a route's own bucket apart, and exempts free routes", async () => {
    // The shared bucket of 127.0.0.1 is empty after the previous test; /strict has its own.
    assert.equal((await rawRequest(s.gw.url, '/api/strict')).status, 200);
    const second = await rawRequest(s.gw.url, '/api/strict');
    assert.equal(second.status, 429);
    assert.equal(second.headers['retry-after'], '2');
    assert.equal(second.headers['ratelimit-limit'], '1');
    for (let i = 0; i < 5; i++) assert.equal((await rawRequest(s.gw.url, '/api/free')).status, 200);
  });
});

describe('rate limiting behind a trusted proxy', () => {
  const s = gatewayForSuite(
    (backend) => `
routes:
  - { method: GET, route: /limited, service: ${backend.host}, path: /limited }
config:
  rateLimit:
    enabled: true
    requestsPerSec: 1
    burst: 1
  trustProxy: [127.0.0.1]
`,
  );

  it('limits each forwarded client separately and ignores the hops the client forged', async () => {
    const get = (xff: string) => rawRequest(s.gw.url, '/api/limited', { headers: { 'x-forwarded-for': xff } });
    assert.equal((await get('198.51.100.1')).status, 200);
    assert.equal((await get('198.51.100.1')).status, 429);
    // A forged left-hand entry changes nothing: the proxy appended the real client on the right.
    assert.equal((await get('192.0.2.99, 198.51.100.1')).status, 429);
    assert.equal((await get('198.51.100.2')).status, 200);
    // Trusted hop (127.0.0.1 itself) on the right is skipped.
    assert.equal((await get('198.51.100.3, 127.0.0.1')).status, 200);
    assert.equal((await get('198.51.100.3')).status, 429);
  });

  it('counts IPv6 clients per /64: addresses of one network share a bucket, another network has its own', async () => {
    const get = (xff: string) => rawRequest(s.gw.url, '/api/limited', { headers: { 'x-forwarded-for': xff } });
    assert.equal((await get('2001:db8:0:1::1')).status, 200);
    for (const sibling of ['2001:db8:0:1::2', '2001:db8:0:1:ffff:ffff:ffff:ffff', '2001:DB8:0:1:0:0:0:7'])
      assert.equal((await get(sibling)).status, 429, sibling);
    assert.equal((await get('2001:db8:0:2::1')).status, 200);
  });
});

describe('rate limiting with rateLimit.ipv6PrefixLength: 128', () => {
  const s = gatewayForSuite(
    (backend) => `
routes:
  - { method: GET, route: /limited, service: ${backend.host}, path: /limited }
config:
  rateLimit: { enabled: true, requestsPerSec: 1, burst: 1, ipv6PrefixLength: 128 }
  trustProxy: [127.0.0.1]
`,
  );

  it('counts each IPv6 address on its own', async () => {
    const get = (xff: string) => rawRequest(s.gw.url, '/api/limited', { headers: { 'x-forwarded-for': xff } });
    assert.equal((await get('2001:db8:0:1::1')).status, 200);
    assert.equal((await get('2001:db8:0:1::2')).status, 200);
    assert.equal((await get('2001:db8:0:1::1')).status, 429);
  });
});

describe('CORS', () => {
  const s = gatewayForSuite(
    (backend) => `
routes:
  - { method: PATCH, route: "/items/{id}", service: ${backend.host}, path: "/items/{id}" }
  - { method: GET, route: /items, service: ${backend.host}, path: /items }
config:
  cors:
    origins: [https://app.example.com]
    credentials: true
    headers: [Content-Type, Authorization]
    exposedHeaders: [X-Request-ID, X-Total]
    maxAgeSec: 300
  rateLimit:
    enabled: true
    requestsPerSec: 1000
`,
    () => startBackend((req, res) => json(res, 200, { method: req.method })),
  );

  it('answers a preflight itself with 204 and never forwards it', async () => {
    const seen = s.backend.seen.length;
    const res = await rawRequest(s.gw.url, '/api/items/7', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'PATCH',
        'access-control-request-headers': 'content-type',
      },
    });
    assert.equal(res.status, 204);
    assert.equal(res.body, '');
    assert.equal(res.headers['access-control-allow-origin'], 'https://app.example.com');
    assert.equal(res.headers['access-control-allow-methods'], 'GET, HEAD, POST, PUT, PATCH, DELETE');
    assert.equal(res.headers['access-control-allow-headers'], 'Content-Type, Authorization');
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
    assert.equal(res.headers['access-control-max-age'], '300');
    assert.equal(res.headers.vary, 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
    assert.equal(s.backend.seen.length, seen);
  });

  it('gives an unknown origin a preflight answer without allow headers', async () => {
    const res = await rawRequest(s.gw.url, '/api/items/7', {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.test', 'access-control-request-method': 'PATCH' },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['access-control-allow-methods'], undefined);
  });

  it('leaves a preflight for an unknown path to the router (404)', async () => {
    const res = await rawRequest(s.gw.url, '/api/nothing', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
    });
    assert.equal(res.status, 404);
  });

  it('adds CORS headers to the actual request, beside the backend answer', async () => {
    const res = await rawRequest(s.gw.url, '/api/items/7', {
      method: 'PATCH',
      headers: { origin: 'https://app.example.com' },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), { method: 'PATCH' });
    assert.equal(res.headers['access-control-allow-origin'], 'https://app.example.com');
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
    assert.equal(res.headers['access-control-expose-headers'], 'X-Request-ID, X-Total');
    assert.equal(res.headers.vary, 'Origin');
    assert.equal(res.headers['ratelimit-limit'], '2000');
  });

  it('adds nothing for an origin that is not allowed', async () => {
    const res = await rawRequest(s.gw.url, '/api/items', { headers: { origin: 'https://evil.test' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });
});

describe('request limits', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((_req, res, body) => json(res, 200, { received: body.length }));
    gw = await startGateway(`
routes:
  - { method: POST, route: /upload, service: ${backend.host}, path: /upload }
  - { method: POST, route: /small, service: ${backend.host}, path: /small, maxBodyBytes: 10 }
config:
  limits:
    maxBodyBytes: 1000
    maxHeaderBytes: 2048
  timeouts:
    clientHeaderSec: 1
    clientBodySec: 1
`);
  });
  after(() => closeAll(gw, backend));

  it('accepts a body within the limit', async () => {
    const res = await request(`${gw.url}/api/upload`, { method: 'POST', body: 'x'.repeat(1000) });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(await res.body.json(), { received: 1000 });
  });

  it('refuses a declared Content-Length over the route limit with 413 before reading it', async () => {
    const seen = backend.seen.length;
    const { text } = await rawExchange(gw.port, ['POST /api/small HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n']);
    assert.equal(statusOf(text), 413);
    assert.match(text, /\r\nx-portico-error: GW_BODY_TOO_LARGE\r\n/i);
    assert.match(text, /\r\nconnection: close\r\n/i);
    assert.deepEqual(bodyOf(text), { error: 'Request body too large', success: false });
    assert.equal(backend.seen.length, seen);
  });

  it('counts the streamed bytes of a chunked body and answers 413 past the limit', async () => {
    const chunk = (s: string) => `${s.length.toString(16)}\r\n${s}\r\n`;
    const { text } = await rawExchange(
      gw.port,
      [
        'POST /api/upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n',
        chunk('a'.repeat(600)),
        chunk('b'.repeat(600)),
        '0\r\n\r\n',
      ],
      { gapMs: 50 },
    );
    assert.equal(statusOf(text), 413);
    assert.deepEqual(bodyOf(text), { error: 'Request body too large', success: false });
  });

  it('passes a chunked body within the limit', async () => {
    const res = await request(`${gw.url}/api/upload`, {
      method: 'POST',
      body: Readable.from(['a'.repeat(400), 'b'.repeat(400)]),
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(await res.body.json(), { received: 800 });
  });

  it('cuts off a client that stops sending its headers (408)', async () => {
    const { text, closedAfterMs } = await rawExchange(gw.port, ['GET /api/upload HTTP/1.1\r\nHost: x\r\n']);
    assert.equal(statusOf(text), 408);
    assert.deepEqual(bodyOf(text), { error: 'Request not received in time', success: false });
    assert.ok(closedAfterMs >= 900 && closedAfterMs < 5_000, `closed after ${closedAfterMs} ms`);
  });

  it('cuts off a client that stops sending its body (408) and aborts the backend call', async () => {
    const { text, closedAfterMs } = await rawExchange(gw.port, [
      'POST /api/upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n',
      'only a part',
    ]);
    assert.equal(statusOf(text), 408);
    assert.match(text, /\r\nx-portico-error: GW_CLIENT_TIMEOUT\r\n/i);
    assert.deepEqual(bodyOf(text), { error: 'Request not received in time', success: false });
    assert.ok(closedAfterMs >= 900 && closedAfterMs < 5_000, `closed after ${closedAfterMs} ms`);
  });

  it('answers 431 to a request head over maxHeaderBytes', async () => {
    const { text } = await rawExchange(gw.port, [
      `GET /api/upload HTTP/1.1\r\nHost: x\r\nX-Big: ${'y'.repeat(4000)}\r\n\r\n`,
    ]);
    assert.equal(statusOf(text), 431);
    assert.deepEqual(bodyOf(text), { error: 'Request headers too large', success: false });
  });

  it('keeps idle keep-alive connections for 72 s by default', async () => {
    assert.equal(gw.gateway.server.keepAliveTimeout, 72_000);
  });
});
