/**
 * gRPC through the gateway (docs/routing.md "gRPC"): a real grpc-js client and a real grpc-js
 * server, over h2c by prior knowledge and over TLS with ALPN h2: unary, server-, client- and
 * bidi-streaming calls; metadata and trailers relayed; deadlines (the client's grpc-timeout and
 * the route's backendSec); auth, rate limits and a backend that is down answered as gRPC
 * statuses; the backend's own error status relayed unchanged; HTTP/1.1 refused.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  connect,
  constants,
  createServer,
  type ClientHttp2Session,
  type Http2Server,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closedPort } from '../support/backend.js';
import { closeAll } from '../support/close-all.js';
import { waitFor } from '../support/wait-for.js';
import { createTestCa, type TestCa } from '../support/certs.js';
import {
  echoClient,
  startGrpcBackend,
  unary,
  type EchoReply,
  type EchoStub,
  type GrpcBackend,
} from '../support/grpc-backend.js';

const SECRET = 'grpc-test-secret-0123456789abcdef0123456789';

/** A gRPC route named `service` in the client's paths, to `backend`'s echo.Echo. */
function routes(service: string, host: string, method: string, extra = 'public: true'): string {
  return `  - { method: POST, route: /${service}/${method}, service: ${host}, path: /echo.Echo/${method}, grpc: true, ${extra} }`;
}

function failure(err: unknown): grpc.ServiceError {
  assert.ok(err instanceof Error && 'code' in err, `a ServiceError, got ${String(err)}`);
  return err as grpc.ServiceError;
}

describe('gRPC over h2c through the gateway', { timeout: 60_000 }, () => {
  let backend: GrpcBackend;
  let gw: TestGateway;
  let client: EchoStub;
  const clients: EchoStub[] = [];
  const clientFor = (service: string) => {
    const c = echoClient(`127.0.0.1:${gw.port}`, grpc.credentials.createInsecure(), service);
    clients.push(c);
    return c;
  };

  before(async () => {
    backend = await startGrpcBackend();
    const down = `127.0.0.1:${await closedPort()}`;
    gw = await startGateway(`
config:
  basePath: "/"
  http2: { cleartext: true }
  auth: { secret: ${SECRET} }
routes:
${['Unary', 'ServerStream', 'ClientStream', 'Bidi'].map((m) => routes('echo.Echo', backend.host, m)).join('\n')}
${routes('secure.Echo', backend.host, 'Unary', 'protected: true')}
${routes('limited.Echo', backend.host, 'Unary', 'public: true, rateLimit: { requestsPerSec: 0.01, burst: 1 }')}
${routes('down.Echo', down, 'Unary')}
${routes('slow.Echo', backend.host, 'Unary', 'public: true, timeouts: { backendSec: 0.3 }')}
  - { method: POST, route: /whole.Echo/*, service: ${backend.host}, path: /echo.Echo/*, grpc: true, public: true }
`);
    client = clientFor('echo.Echo');
  });
  after(async () => {
    for (const c of clients) c.close();
    await closeAll(gw, backend);
  });

  it('a unary call: the reply, the initial metadata and the trailing metadata come back', async () => {
    const metadata = new grpc.Metadata();
    metadata.set('x-tag', 'blue');
    const { reply, metadata: head, trailers } = await unary(client, 'hello', metadata);
    assert.deepEqual(reply, { text: 'hello' });
    assert.deepEqual(head.get('x-tag'), ['blue']);
    assert.deepEqual(trailers.get('x-trailer'), ['done']);
    const seen = backend.seen.at(-1)!;
    assert.equal(seen.metadata['x-tag'], 'blue');
    assert.equal(typeof seen.metadata['x-request-id'], 'string');
  });

  it('a server-streaming call: every message, then the trailers', async () => {
    const call = client.ServerStream({ text: 'one two three' });
    const got: string[] = [];
    call.on('data', (m: EchoReply) => got.push(m.text));
    const status = await new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    assert.equal(status.code, grpc.status.OK);
    assert.deepEqual(got, ['one', 'two', 'three']);
    assert.deepEqual(status.metadata.get('x-trailer'), ['done']);
  });

  it('a client-streaming call: the messages reach the backend as sent, one reply', async () => {
    const reply = await new Promise<EchoReply>((resolve, reject) => {
      const call = client.ClientStream(new grpc.Metadata(), {}, (err, r) => (err ? reject(err) : resolve(r!)));
      for (const text of ['a', 'b', 'c']) call.write({ text });
      call.end();
    });
    assert.deepEqual(reply, { text: 'a b c' });
  });

  it('a bidi call: each reply comes back before the client sends the next message', async () => {
    const call = client.Bidi();
    const replies: string[] = [];
    for (const text of ['x', 'y', 'z']) {
      call.write({ text });
      // The next message goes only once this one's echo came back: both directions stream at once.
      const echo = await new Promise<EchoReply>((resolve) => call.once('data', resolve));
      replies.push(echo.text);
    }
    call.end();
    const status = await new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    assert.deepEqual(replies, ['echo x', 'echo y', 'echo z']);
    assert.equal(status.code, grpc.status.OK);
    assert.deepEqual(status.metadata.get('x-trailer'), ['done']);
  });

  it("the backend's own error status, message and trailing metadata are relayed unchanged", async () => {
    const err = failure(await unary(client, 'not-found').catch((e: unknown) => e));
    assert.equal(err.code, grpc.status.NOT_FOUND);
    assert.equal(err.details, 'thing 42 not found');
    assert.deepEqual(err.metadata.get('x-reason'), ['no such thing']);
    assert.deepEqual(err.metadata.get('x-portico-error'), []);
  });

  it('no token on a protected route: UNAUTHENTICATED with the gateway message and code', async () => {
    const secure = clientFor('secure.Echo');
    const err = failure(await unary(secure, 'hi').catch((e: unknown) => e));
    assert.equal(err.code, grpc.status.UNAUTHENTICATED);
    assert.equal(err.details, 'Missing bearer token');
    assert.deepEqual(err.metadata.get('x-portico-error'), ['GW_AUTH_MISSING']);
  });

  it('a valid bearer token in the authorization metadata passes, and the backend sees its claims', async () => {
    const secure = clientFor('secure.Echo');
    const token = await new SignJWT({ sub: 'user-7' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(SECRET));
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${token}`);
    const { reply } = await unary(secure, 'with token', metadata);
    assert.deepEqual(reply, { text: 'with token' });
    assert.equal(backend.seen.at(-1)!.metadata['x-user-id'] ?? backend.seen.at(-1)!.metadata['x-sub'], 'user-7');
  });

  it('over the rate limit: RESOURCE_EXHAUSTED, with the code and Retry-After', async () => {
    const limited = clientFor('limited.Echo');
    await unary(limited, 'first');
    const err = failure(await unary(limited, 'second').catch((e: unknown) => e));
    assert.equal(err.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.deepEqual(err.metadata.get('x-portico-error'), ['GW_RATE_LIMITED']);
    assert.equal(err.metadata.get('retry-after').length, 1);
  });

  it('a backend that is down: UNAVAILABLE', async () => {
    const down = clientFor('down.Echo');
    const err = failure(await unary(down, 'hi').catch((e: unknown) => e));
    assert.equal(err.code, grpc.status.UNAVAILABLE);
    assert.deepEqual(err.metadata.get('x-portico-error'), ['GW_UPSTREAM_UNREACHABLE']);
  });

  it("the route's backendSec passes first: DEADLINE_EXCEEDED from the gateway, the backend call cancelled", async () => {
    const slow = clientFor('slow.Echo');
    const before = backend.cancelled.length;
    const err = failure(
      await unary(slow, 'hang', new grpc.Metadata(), { deadline: Date.now() + 10_000 }).catch((e: unknown) => e),
    );
    assert.equal(err.code, grpc.status.DEADLINE_EXCEEDED);
    assert.deepEqual(err.metadata.get('x-portico-error'), ['GW_UPSTREAM_TIMEOUT']);
    await waitFor(() => backend.cancelled.length > before);
  });

  it('a client that cancels a stream: the backend call is cancelled too', async () => {
    const before = backend.cancelled.length;
    const call = client.Bidi();
    call.on('error', () => {}); // CANCELLED, the client's own doing
    call.write({ text: 'c' });
    await new Promise((resolve) => call.once('data', resolve));
    call.cancel();
    await waitFor(() => backend.cancelled.length > before);
    assert.equal(backend.cancelled.at(-1), 'Bidi');
  });

  it('a prefix route serves every method of a service', async () => {
    const whole = clientFor('whole.Echo');
    const { reply } = await unary(whole, 'via prefix');
    assert.deepEqual(reply, { text: 'via prefix' });
    const call = whole.Bidi();
    call.write({ text: 'p' });
    const echo = await new Promise<EchoReply>((resolve) => call.once('data', resolve));
    call.end();
    await new Promise((resolve) => call.on('status', resolve));
    assert.equal(echo.text, 'echo p');
  });

  it('a method no route serves: UNIMPLEMENTED', async () => {
    const other = clientFor('nothing.Here');
    const err = failure(await unary(other, 'hi').catch((e: unknown) => e));
    assert.equal(err.code, grpc.status.UNIMPLEMENTED);
    assert.deepEqual(err.metadata.get('x-portico-error'), ['GW_ROUTE_NOT_FOUND']);
  });

  it('HTTP/1.1 on a gRPC route: a JSON 505 that says gRPC needs HTTP/2, and the backend is not called', async () => {
    const calls = backend.seen.length;
    const res = await fetch(`${gw.url}/echo.Echo/Unary`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc' },
      body: grpcFrame({ text: 'hi' }),
    });
    assert.equal(res.status, 505);
    assert.equal(res.headers.get('x-portico-error'), 'GW_GRPC_HTTP_VERSION');
    assert.match(((await res.json()) as { error: string }).error, /gRPC requires HTTP\/2/);
    assert.equal(backend.seen.length, calls);
  });
});

describe('gRPC over TLS (ALPN h2) to an h2c backend and to a TLS backend', { timeout: 60_000 }, () => {
  let ca: TestCa;
  let plain: GrpcBackend;
  let secure: GrpcBackend;
  let gw: TestGateway;
  let client: EchoStub;

  before(async () => {
    ca = createTestCa();
    const gwCert = ca.issue('localhost');
    const backendCert = ca.issue('127.0.0.1');
    plain = await startGrpcBackend();
    secure = await startGrpcBackend(
      grpc.ServerCredentials.createSsl(null, [
        { cert_chain: readFileSync(backendCert.certFile), private_key: readFileSync(backendCert.keyFile) },
      ]),
    );
    gw = await startGateway(`
config:
  basePath: "/"
  tls: { certFile: ${gwCert.certFile}, keyFile: ${gwCert.keyFile} }
  upstreamTls: { caFile: ${ca.caFile} }
routes:
${['Unary', 'Bidi'].map((m) => routes('echo.Echo', plain.host, m)).join('\n')}
${routes('tls.Echo', `https://${secure.host}`, 'Unary')}
`);
    client = echoClient(`localhost:${gw.port}`, grpc.credentials.createSsl(readFileSync(ca.caFile)));
  });
  after(async () => {
    client?.close();
    await closeAll(gw, plain, secure);
    ca?.remove();
  });

  it('a unary and a bidi call over TLS reach an h2c backend', async () => {
    const { reply, trailers } = await unary(client, 'over tls');
    assert.deepEqual(reply, { text: 'over tls' });
    assert.deepEqual(trailers.get('x-trailer'), ['done']);
    const call = client.Bidi();
    call.write({ text: 'q' });
    const echo = await new Promise<EchoReply>((resolve) => call.once('data', resolve));
    call.end();
    await new Promise((resolve) => call.on('status', resolve));
    assert.equal(echo.text, 'echo q');
  });

  it('a unary call to a TLS backend (ALPN h2 on the way out too)', async () => {
    const tlsClient = echoClient(
      `localhost:${gw.port}`,
      grpc.credentials.createSsl(readFileSync(ca.caFile)),
      'tls.Echo',
    );
    try {
      const { reply } = await unary(tlsClient, 'tls both ways');
      assert.deepEqual(reply, { text: 'tls both ways' });
      assert.equal(secure.seen.length, 1);
    } finally {
      tlsClient.close();
    }
  });
});

describe('gRPC at the HTTP/2 level (a node:http2 backend)', { timeout: 60_000 }, () => {
  let backend: Http2Server;
  let host: string;
  let gw: TestGateway;
  let session: ClientHttp2Session;
  const seen: IncomingHttpHeaders[] = [];
  /** Paths of the backend streams closed before the backend ended them. */
  const closed: string[] = [];
  /** HTTP/2 connections the backend accepted. */
  let sessions = 0;
  /** Streams of /hold.Me/Now, answered together once `holdFor` have arrived. */
  const held: ServerHttp2Stream[] = [];
  let holdFor = Infinity;

  before(async () => {
    backend = createServer();
    backend.on('session', () => sessions++);
    backend.on('stream', (stream, headers) => {
      seen.push(headers);
      stream.on('error', () => {}); // its own reset, below
      if (headers[':path'] === '/hold.Me/Now') {
        stream.resume();
        held.push(stream);
        if (held.length < holdFor) return;
        for (const s of held.splice(0)) {
          s.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
          s.once('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
          s.end(grpcFrame({ text: 'held' }));
        }
        return;
      }
      // Never answers, whatever its grpc-timeout says: only the gateway can end the call.
      if (headers[':path'] === '/hang.Me/Now') return void stream.on('close', () => closed.push('/hang.Me/Now'));
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.write(grpcFrame({ text: 'first' }));
      // The backend fails mid-answer: the stream is reset after its head and one message.
      if (headers[':path'] === '/reset.Me/Now') setTimeout(() => stream.close(constants.NGHTTP2_INTERNAL_ERROR), 20);
      else stream.end();
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    host = `127.0.0.1:${(backend.address() as AddressInfo).port}`;
    gw = await startGateway(`
config:
  basePath: "/"
  http2: { cleartext: true }
routes:
  - { method: POST, route: /te.Check/Call, service: ${host}, path: /te.Check/Call, grpc: true }
  - { method: POST, route: /reset.Me/Now, service: ${host}, path: /reset.Me/Now, grpc: true }
  - { method: POST, route: /hang.Me/Now, service: ${host}, path: /hang.Me/Now, grpc: true }
  - { method: POST, route: /hold.Me/Now, service: ${host}, path: /hold.Me/Now, grpc: true }
`);
    session = connect(gw.url);
  });
  after(async () => {
    session?.close();
    await gw?.close();
    await new Promise((resolve) => backend?.close(resolve));
  });

  function call(path: string, headers: Record<string, string> = {}) {
    const stream = session.request({
      ':method': 'POST',
      ':path': path,
      'content-type': 'application/grpc',
      ...headers,
    });
    stream.end(grpcFrame({ text: 'x' }));
    return new Promise<{ head: IncomingHttpHeaders; trailers: IncomingHttpHeaders }>((resolve, reject) => {
      let head: IncomingHttpHeaders = {};
      let trailers: IncomingHttpHeaders = {};
      stream.on('response', (h) => (head = h));
      stream.on('trailers', (t) => (trailers = t));
      stream.on('close', () => resolve({ head, trailers }));
      stream.on('error', reject);
      stream.resume();
    });
  }

  it('the backend gets te: trailers, and the grpc-timeout the client sent', async () => {
    await call('/te.Check/Call', { te: 'trailers', 'grpc-timeout': '5S' });
    const headers = seen.at(-1)!;
    assert.equal(headers.te, 'trailers');
    assert.equal(headers['grpc-timeout'], '5S');
    assert.equal(headers['content-type'], 'application/grpc');
  });

  it('te: trailers goes to the backend even when the client sent none', async () => {
    await call('/te.Check/Call');
    assert.equal(seen.at(-1)!.te, 'trailers');
  });

  it("the client's grpc-timeout passes first: the gateway answers DEADLINE_EXCEEDED itself and cancels the backend stream", async () => {
    const closedBefore = closed.length;
    const stream = session.request({
      ':method': 'POST',
      ':path': '/hang.Me/Now',
      'content-type': 'application/grpc',
      te: 'trailers',
      'grpc-timeout': '200m',
    });
    stream.end(grpcFrame({ text: 'hang' }));
    const [head, flags] = await new Promise<[IncomingHttpHeaders, number]>((resolve) =>
      stream.once('response', (h, f) => resolve([h, f])),
    );
    stream.resume();
    assert.equal(head[':status'], 200);
    assert.equal(head['grpc-status'], '4');
    assert.equal(head['x-portico-error'], 'GW_UPSTREAM_TIMEOUT');
    // Trailers-Only: the one HEADERS frame ends the stream.
    assert.ok((flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0, 'END_STREAM on the HEADERS frame');
    await waitFor(() => closed.length > closedBefore && closed.at(-1) === '/hang.Me/Now');
  });

  it('unary calls in flight together share one connection to the backend (streams, not connections)', async () => {
    const before = sessions;
    holdFor = 8;
    // Each call's message and end come with its head, as a unary call's do: the backend holds
    // them all until the eighth arrives, so they are in flight at once.
    const answers = await Promise.all(Array.from({ length: 8 }, () => call('/hold.Me/Now', { te: 'trailers' })));
    for (const { head, trailers } of answers) {
      assert.equal(head[':status'], 200);
      assert.equal(trailers['grpc-status'], '0');
    }
    // At most the one it opens if none was open yet; a call per connection would take eight.
    assert.ok(sessions - before <= 1, `${sessions - before} new connections for 8 calls`);
  });

  it('a backend that resets the stream after its head: the answer ends with UNAVAILABLE in its trailers', async () => {
    const { head, trailers } = await call('/reset.Me/Now');
    assert.equal(head[':status'], 200);
    assert.equal(trailers['grpc-status'], '14');
    assert.equal(trailers['x-portico-error'], 'GW_UPSTREAM_UNREACHABLE');
  });
});

describe('a gRPC route split between two backends', { timeout: 60_000 }, () => {
  let a: GrpcBackend;
  let b: GrpcBackend;
  let gw: TestGateway;
  let client: EchoStub;

  before(async () => {
    a = await startGrpcBackend();
    b = await startGrpcBackend();
    gw = await startGateway(`
config:
  basePath: "/"
  http2: { cleartext: true }
routes:
  - method: POST
    route: /echo.Echo/Unary
    path: /echo.Echo/Unary
    grpc: true
    split:
      - { service: ${a.host}, weight: 1 }
      - { service: ${b.host}, weight: 1 }
`);
    client = echoClient(`127.0.0.1:${gw.port}`);
  });
  after(async () => {
    client?.close();
    await closeAll(gw, a, b);
  });

  it('each arm gets its share of the calls, over HTTP/2 to each', async () => {
    for (let i = 0; i < 4; i++) assert.deepEqual((await unary(client, `call ${i}`)).reply, { text: `call ${i}` });
    assert.equal(a.seen.length, 2);
    assert.equal(b.seen.length, 2);
  });
});

/** One gRPC message frame: uncompressed flag, 4-byte length, the JSON message. */
function grpcFrame(message: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(message));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}
