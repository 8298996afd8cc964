/**
 * HTTP/2 on the listener end to end (docs/tls.md): h2 and HTTP/1.1 on one TLS port with the same
 * answers (curl and node:http2); auth, rate limits, CORS, mapping, errors and request ids over h2;
 * SSE events on time; a body without content-length counted against the limit; WebSocket still
 * on HTTP/1.1 on the same port; a drain that lets an h2 stream in flight finish; and h2c by prior
 * knowledge beside HTTP/1.1 on a plain port. mTLS over h2 is in tls.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, constants, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { h2request } from '../support/http2.js';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { once } from 'node:events';
import { request as httpsRequest } from 'node:https';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { createTestCa, type TestCa } from '../support/certs.js';
import { startWsBackend, type WsBackend } from '../support/ws-backend.js';
import { closeAll } from '../support/close-all.js';

const run = promisify(execFile);
const SECRET = 'http2-test-secret-0123456789abcdef0123456789';

/** Headers as a client compares them across protocols: without the per-request and per-protocol ones. */
function comparable(headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(headers))
    if (!k.startsWith(':') && !['date', 'x-request-id', 'connection', 'keep-alive', 'traceparent'].includes(k))
      out[k] = v;
  return out;
}

/** curl's answer: status, headers (lower-case names) and body, with the protocol curl used. */
async function curl(
  args: string[],
): Promise<{ version: string; status: number; headers: Record<string, string>; body: string }> {
  const { stdout } = await run('curl', ['-sS', '-i', ...args]);
  const split = stdout.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = stdout.slice(0, split).split('\r\n');
  const [version, status] = statusLine!.split(' ');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { version: version!, status: Number(status), headers, body: stdout.slice(split + 4) };
}

describe('HTTP/2 on the TLS listener', () => {
  let ca: TestCa;
  let backend: TestBackend;
  let users: TestBackend;
  let wsBackend: WsBackend;
  let gw: TestGateway;
  let session: ClientHttp2Session;
  let caPem: Buffer;
  const sse: { write?: (data: string) => void } = {};

  before(async () => {
    ca = createTestCa();
    caPem = readFileSync(ca.caFile);
    const cert = ca.issue('localhost');
    backend = await startBackend((req, res, body) => {
      if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': open\n\n');
        sse.write = (data) => res.write(`data: ${data}\n\n`);
        return;
      }
      if (req.url === '/orders') return json(res, 200, [{ id: 1, userId: 7 }]);
      return json(res, 200, { method: req.method, headers: req.headers, bytes: body.length }, { 'x-backend': 'yes' });
    });
    users = await startBackend((req, res) => json(res, 200, { name: `user ${req.url?.split('/').pop()}` }));
    wsBackend = await startWsBackend();
    gw = await startGateway(`
config:
  tls: { certFile: ${cert.certFile}, keyFile: ${cert.keyFile}, hstsMaxAgeSec: 600 }
  auth: { secret: ${SECRET}, defaultProtected: true }
  cors: { origins: [https://app.example.com] }
  limits: { maxBodyBytes: 1000 }
routes:
  - { method: GET, route: /echo, service: ${backend.host}, path: /echo, public: true }
  - { method: POST, route: /echo, service: ${backend.host}, path: /echo, public: true }
  - { method: GET, route: /private, service: ${backend.host}, path: /echo }
  - { method: GET, route: /events, service: ${backend.host}, path: /events, public: true, isSSE: true }
  - { method: GET, route: /ws, service: ${wsBackend.host}, path: /echo, public: true, isWebSocket: true }
  - { method: GET, route: /limited, service: ${backend.host}, path: /echo, public: true,
      rateLimit: { requestsPerSec: 0.01, burst: 1 } }
  - { method: GET, route: /orders, service: ${backend.host}, path: /orders, public: true,
      mapping: [{ path: "/users/{userId}", service: ${users.host}, tag: user }] }
`);
    session = connect(`https://localhost:${gw.port}`, { ca: caPem });
  });
  after(async () => {
    session?.close();
    await gw?.close();
    await backend?.close();
    await users?.close();
    await wsBackend?.close();
    ca?.remove();
  });

  it('curl --http2 and --http1.1 get the same answer, and the backend sees the same request', async () => {
    const common = [
      '--cacert',
      ca.caFile,
      '-H',
      'x-custom: 1',
      '-H',
      'cookie: a=1',
      `https://localhost:${gw.port}/api/echo`,
    ];
    const h2 = await curl(['--http2', ...common]);
    const h1 = await curl(['--http1.1', ...common]);
    assert.equal(h2.version, 'HTTP/2');
    assert.equal(h1.version, 'HTTP/1.1');
    assert.equal(h2.status, 200);
    assert.equal(h1.status, 200);
    assert.deepEqual(comparable(h2.headers), comparable(h1.headers));
    assert.equal(h2.headers['strict-transport-security'], 'max-age=600');
    assert.equal(h2.headers['x-backend'], 'yes');
    const seen2 = JSON.parse(h2.body) as { headers: Record<string, unknown> };
    const seen1 = JSON.parse(h1.body) as { headers: Record<string, unknown> };
    assert.deepEqual(comparable(seen2.headers), comparable(seen1.headers));
    assert.equal(seen2.headers.host, backend.host);
    assert.equal(seen2.headers['x-forwarded-host'], `localhost:${gw.port}`);
    assert.equal(seen2.headers['x-forwarded-proto'], 'https');
  });

  it('sends a split Cookie as one field and no pseudo-header to the backend', async () => {
    const stream = session.request({ ':path': '/api/echo', cookie: ['a=1', 'b=2'] as unknown as string });
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    await once(stream, 'end');
    const seen = JSON.parse(Buffer.concat(chunks).toString()) as { headers: Record<string, string> };
    assert.equal(seen.headers.cookie, 'a=1; b=2');
    assert.deepEqual(
      Object.keys(seen.headers).filter((k) => k.startsWith(':')),
      [],
    );
  });

  it('errors, request ids, auth, rate limits, CORS and mapping behave as on HTTP/1.1', async () => {
    const missing = await h2request(session, '/api/nothing', { 'x-request-id': 'h2-missing' });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['x-request-id'], 'h2-missing');
    assert.equal(missing.headers['x-portico-error'], 'GW_ROUTE_NOT_FOUND');
    assert.deepEqual(JSON.parse(missing.body), { error: 'No route matches this path', success: false });

    const refused = await h2request(session, '/api/private');
    assert.equal(refused.status, 401);
    assert.equal(JSON.parse(refused.body).success, false);
    const token = await new SignJWT({ sub: 'u1' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(SECRET));
    const allowed = await h2request(session, '/api/private', { authorization: `Bearer ${token}` });
    assert.equal(allowed.status, 200);

    assert.equal((await h2request(session, '/api/limited')).status, 200);
    const limited = await h2request(session, '/api/limited');
    assert.equal(limited.status, 429);
    assert.ok(limited.headers['retry-after'] !== undefined);

    const preflight = await h2request(session, '/api/echo', {
      ':method': 'OPTIONS',
      origin: 'https://app.example.com',
      'access-control-request-method': 'POST',
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], 'https://app.example.com');

    const mapped = await h2request(session, '/api/orders');
    assert.deepEqual(JSON.parse(mapped.body), [{ id: 1, userId: 7, user: { name: 'user 7' } }]);

    // A WebSocket route asked over h2 (no upgrade there): 426, without the connection-specific
    // headers HTTP/2 forbids.
    const ws = await h2request(session, '/api/ws');
    assert.equal(ws.status, 426);
    assert.equal(ws.headers.upgrade, undefined);
    assert.equal(ws.headers.connection, undefined);
  });

  it('refuses a malformed :authority on that stream alone, like a bad Host', async () => {
    // Userinfo is refused by nghttp2 itself on newer Node versions (a stream reset), and by the
    // gateway's Host check where nghttp2 lets it through: either way only that stream fails.
    const bad = await h2request(session, '/api/echo', { ':authority': 'user@evil.example' }).catch(
      (err: NodeJS.ErrnoException) => err.code ?? String(err),
    );
    if (typeof bad === 'string') assert.equal(bad, 'ERR_HTTP2_STREAM_ERROR');
    else {
      assert.equal(bad.status, 400);
      assert.equal(bad.headers['x-portico-error'], 'GW_BAD_HOST');
    }
    assert.equal((await h2request(session, '/api/echo')).status, 200, 'the connection goes on serving');
  });

  it('counts a body sent without content-length against maxBodyBytes', async () => {
    const small = await h2request(session, '/api/echo', { ':method': 'POST' }, Buffer.alloc(600));
    assert.equal(small.status, 200);
    assert.equal(JSON.parse(small.body).bytes, 600);
    // A new connection: the refusal may reset the stream before the client has sent it all.
    const other = connect(`https://localhost:${gw.port}`, { ca: caPem });
    try {
      const big = await h2request(other, '/api/echo', { ':method': 'POST' }, Buffer.alloc(5000));
      assert.equal(big.status, 413);
      assert.equal(big.headers['x-portico-error'], 'GW_BODY_TOO_LARGE');
    } finally {
      other.close();
    }
  });

  it('delivers each SSE event within 50 ms of the backend writing it', async () => {
    const stream = session.request({ ':path': '/api/events', accept: 'text/event-stream' });
    const [head] = (await once(stream, 'response')) as [IncomingHttpHeaders];
    assert.equal(head[':status'], 200);
    assert.equal(head['content-type'], 'text/event-stream');
    stream.setEncoding('utf8');
    const delays: number[] = [];
    let buffered = '';
    const done = new Promise<void>((resolve) => {
      stream.on('data', (chunk: string) => {
        buffered += chunk;
        for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
          const event = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          if (!event.startsWith('data: ')) continue;
          delays.push(performance.now() - Number(event.slice(6)));
          if (delays.length === 5) resolve();
          else sse.write!(String(performance.now()));
        }
      });
    });
    sse.write!(String(performance.now()));
    await done;
    stream.close();
    assert.equal(delays.length, 5);
    for (const d of delays) assert.ok(d < 50, `an event took ${d.toFixed(1)} ms`);
  });

  it('serves WebSocket on the same port over HTTP/1.1', async () => {
    const ws = new WebSocket(`wss://localhost:${gw.port}/api/ws`, { ca: caPem });
    await once(ws, 'open');
    ws.send('over h1');
    const [message] = (await once(ws, 'message')) as [Buffer];
    assert.equal(message.toString(), 'over h1');
    ws.close();
    await once(ws, 'close');
  });

  it('serves an HTTPS/1.1 request with Upgrade: h2c as a plain request', async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: 'localhost',
          port: gw.port,
          path: '/api/echo',
          ca: caPem,
          headers: {
            connection: 'Upgrade, HTTP2-Settings',
            upgrade: 'h2c',
            'http2-settings': 'AAMAAABkAAQAoAAAAAIAAAAA',
          },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    assert.equal(answer.status, 200);
    assert.equal((JSON.parse(answer.body) as { headers: Record<string, string> }).headers.upgrade, undefined);
  });

  it('a drain lets an h2 stream in flight finish, then closes the connection', async () => {
    const slow = await startBackend(async (_req, res) => {
      await new Promise((r) => setTimeout(r, 300));
      json(res, 200, { late: true });
    });
    const cert = ca.issue('localhost', 'drain');
    const draining = await startGateway(`
config:
  tls: { certFile: ${cert.certFile}, keyFile: ${cert.keyFile} }
routes:
  - { method: GET, route: /slow, service: ${slow.host}, path: /slow }
`);
    const client = connect(`https://localhost:${draining.port}`, { ca: caPem });
    try {
      const answer = h2request(client, '/api/slow');
      await once(slow.server, 'request');
      const goaway = once(client, 'goaway');
      const closed = draining.close();
      const [code] = (await goaway) as [number];
      assert.equal(code, constants.NGHTTP2_NO_ERROR);
      const r = await answer;
      assert.equal(r.status, 200);
      assert.deepEqual(JSON.parse(r.body), { late: true });
      await closed;
    } finally {
      client.destroy();
      await slow.close();
    }
  });
});

describe('h2c by prior knowledge beside HTTP/1.1 (http2.cleartext)', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, { proto: req.headers['x-forwarded-proto'] }));
    gw = await startGateway(`
config:
  http2: { cleartext: true }
routes:
  - { method: GET, route: /hello, service: ${backend.host}, path: /hello }
`);
  });
  after(() => closeAll(gw, backend));

  it('serves h2 and HTTP/1.1 on one plain port', async () => {
    const h2 = await curl(['--http2-prior-knowledge', `${gw.url}/api/hello`]);
    assert.equal(h2.version, 'HTTP/2');
    assert.equal(h2.status, 200);
    assert.deepEqual(JSON.parse(h2.body), { proto: 'http' });
    const h1 = await curl([`${gw.url}/api/hello`]);
    assert.equal(h1.version, 'HTTP/1.1');
    assert.equal(h1.body, h2.body);
    const health = await gw.get('/health');
    assert.equal(health.status, 200);
  });

  it('node:http2 streams several requests on one connection', async () => {
    const session = connect(gw.url);
    try {
      const answers = await Promise.all([1, 2, 3].map(() => h2request(session, '/api/hello')));
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 200, 200],
      );
      const ids = new Set(answers.map((a) => a.headers['x-request-id']));
      assert.equal(ids.size, 3);
    } finally {
      session.close();
    }
  });
});

describe('http2.enabled: false', () => {
  let ca: TestCa;
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    ca = createTestCa();
    const cert = ca.issue('localhost');
    backend = await startBackend();
    gw = await startGateway(`
config:
  tls: { certFile: ${cert.certFile}, keyFile: ${cert.keyFile} }
  http2: { enabled: false }
routes:
  - { method: GET, route: /hello, service: ${backend.host}, path: /hello }
`);
  });
  after(async () => {
    await gw?.close();
    await backend?.close();
    ca?.remove();
  });

  it('keeps the TLS port on HTTP/1.1: a client asking for h2 gets HTTP/1.1', async () => {
    const r = await curl(['--http2', '--cacert', ca.caFile, `https://localhost:${gw.port}/api/hello`]);
    assert.equal(r.version, 'HTTP/1.1');
    assert.equal(r.status, 200);
  });
});
