/**
 * A client that leaves is its own outcome, never an upstream error: an SSE client that disconnects,
 * or a client that leaves a mapped route before its answer, is logged as "client closed" (debug),
 * counted in `portico_requests_aborted_total`, and never appears in `portico_upstream_errors_total`,
 * in an "upstream error" log line, or as a circuit failure. It also checks what a departure costs
 * the backend side: an SSE stream cut mid-body cannot be reused over HTTP/1.1 (its connection
 * closes, while streams the backend ends are reused), over HTTP/2 only the stream is reset, and no
 * socket is left behind.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import { request } from 'undici';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/wait-for.js';
import { createTestCa } from '../support/certs.js';

/** Starts a GET and resolves with the response head (the body is left to the caller). */
function open(url: string, path: string): Promise<{ req: ClientRequest; res: IncomingMessage }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path, agent: false }, (res) => resolve({ req, res }));
    req.on('error', reject);
    req.end();
  });
}

describe('a client that leaves is not an upstream error', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  /** Backend TCP connections that served an SSE stream, and those of them still open. */
  const streamSockets = new Set<Socket>();
  const openStreamSockets = new Set<Socket>();
  /** Resolvers of the backend responses the test holds open. */
  const held: (() => void)[] = [];
  let streamsClosed = 0;
  /** Backend TCP connections that served a stream the backend ended itself. */
  const shortStreamSockets = new Set<Socket>();

  before(async () => {
    backend = await startBackend((req, res) => {
      res.on('close', () => {
        if (req.url === '/events') streamsClosed++;
      });
      if (req.url === '/events') {
        const socket = req.socket;
        if (!streamSockets.has(socket)) {
          streamSockets.add(socket);
          openStreamSockets.add(socket);
          socket.once('close', () => openStreamSockets.delete(socket));
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: first\n\n');
        return; // never ends: the client leaves
      }
      if (req.url === '/short-events') {
        shortStreamSockets.add(req.socket);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('data: only\n\n');
        return;
      }
      if (req.url === '/slow-items') {
        held.push(() => json(res, 200, [{ id: 1, userId: 'u1' }]));
        return;
      }
      if (req.url === '/items') return json(res, 200, [{ id: 1, userId: 'u1' }]);
      if (req.url === '/text') {
        // Not JSON: relayed as it streams, and it never ends.
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('x'.repeat(1000));
        held.push(() => res.end());
        return;
      }
      if (req.url?.startsWith('/users/')) {
        held.push(() => json(res, 200, { name: 'Ada' }));
        return;
      }
      json(res, 404, {});
    });
    gw = await startGateway(`
routes:
  - { method: GET, route: /events, service: ${backend.host}, path: /events, isSSE: true }
  - { method: GET, route: /short-events, service: ${backend.host}, path: /short-events, isSSE: true }
  - { method: GET, route: /slow-items, service: ${backend.host}, path: /slow-items,
      mapping: [{ path: "/users/{userId}", service: ${backend.host}, tag: user }] }
  - { method: GET, route: /items, service: ${backend.host}, path: /items,
      mapping: [{ path: "/users/{userId}", service: ${backend.host}, tag: user }] }
  - { method: GET, route: /text, service: ${backend.host}, path: /text,
      mapping: [{ path: "/users/{userId}", service: ${backend.host}, tag: user }] }
config:
  circuitBreaker: { enabled: true, maxFailures: 1, timeoutSec: 60 }
`);
  });
  after(async () => {
    for (const release of held.splice(0)) release();
    await gw?.close();
    await backend?.close();
  });

  const upstreamErrorLines = (from = 0) => gw.logs.slice(from).filter((l) => l.msg === 'upstream error');
  const circuitState = () => gw.gateway.circuits.snapshot().find((c) => c.origin === backend.url);
  async function metricsText(): Promise<string> {
    return (await request(`${gw.url}/metrics`)).body.text();
  }

  it('an SSE client that disconnects: "client closed" at debug, no upstream error, no circuit failure', async () => {
    const before = { lines: gw.logs.length, closed: streamsClosed };
    const { req, res } = await open(gw.url, '/api/events');
    assert.equal(res.statusCode, 200);
    await new Promise((r) => res.once('data', r));
    req.destroy();
    await waitFor(() => streamsClosed === before.closed + 1, 3_000, 'the backend stream closes');
    await waitFor(
      () => gw.logs.slice(before.lines).some((l) => l.msg === 'request' && l.path === '/api/events'),
      3_000,
      'the request is logged',
    );
    assert.deepEqual(upstreamErrorLines(before.lines), [], 'no "upstream error" line');
    const departure = gw.logs.slice(before.lines).find((l) => l.msg === 'client closed');
    assert.ok(departure, 'a "client closed" line');
    assert.equal(departure.level, 20, 'at debug');
    assert.equal(departure.route, 'GET /events');
    assert.notEqual(circuitState()?.state, 'open', 'maxFailures is 1: a counted failure would have opened the circuit');
    const text = await metricsText();
    assert.doesNotMatch(text, /^portico_upstream_errors_total\{/m);
    assert.match(text, /^portico_requests_aborted_total\{route="\/events"\} 1$/m);
  });

  it('a client that leaves a mapped route while the backend is answering: no upstream error, no circuit failure', async () => {
    const before = gw.logs.length;
    const { req } = await new Promise<{ req: ClientRequest }>((resolve) => {
      const u = new URL(gw.url);
      const r = httpRequest({ host: u.hostname, port: u.port, path: '/api/slow-items', agent: false });
      r.on('error', () => {});
      r.end();
      resolve({ req: r });
    });
    await waitFor(() => held.length === 1, 3_000, 'the backend has the request');
    req.destroy();
    await waitFor(
      () => gw.logs.slice(before).some((l) => l.msg === 'request' && l.path === '/api/slow-items'),
      3_000,
      'the request is logged',
    );
    held.splice(0).forEach((release) => release());
    assert.deepEqual(upstreamErrorLines(before), []);
    assert.ok(gw.logs.slice(before).some((l) => l.msg === 'client closed' && l.route === 'GET /slow-items'));
    assert.notEqual(circuitState()?.state, 'open');
  });

  it('a client that leaves while the mapping calls run: no upstream error, no mapping warning, no circuit failure', async () => {
    const before = gw.logs.length;
    const u = new URL(gw.url);
    const req = httpRequest({ host: u.hostname, port: u.port, path: '/api/items', agent: false });
    req.on('error', () => {});
    req.end();
    await waitFor(() => held.length === 1, 3_000, 'the mapping call reached the backend');
    req.destroy();
    await waitFor(
      () => gw.logs.slice(before).some((l) => l.msg === 'request' && l.path === '/api/items'),
      3_000,
      'the request is logged',
    );
    held.splice(0).forEach((release) => release());
    assert.deepEqual(upstreamErrorLines(before), []);
    assert.deepEqual(
      gw.logs.slice(before).filter((l) => l.msg === 'mapping failed'),
      [],
      'a call nobody waits for is not a failed mapping',
    );
    assert.notEqual(circuitState()?.state, 'open');
  });

  it('a client that leaves a mapped route while an unmappable body is relayed: no upstream error', async () => {
    const before = gw.logs.length;
    const { req, res } = await open(gw.url, '/api/text');
    await new Promise((r) => res.once('data', r));
    req.destroy();
    await waitFor(
      () => gw.logs.slice(before).some((l) => l.msg === 'request' && l.path === '/api/text'),
      3_000,
      'the request is logged',
    );
    await waitFor(
      () => gw.logs.slice(before).some((l) => l.msg === 'client closed' && l.route === 'GET /text'),
      3_000,
      'the departure is logged',
    );
    held.splice(0).forEach((release) => release());
    assert.deepEqual(upstreamErrorLines(before), []);
    assert.notEqual(circuitState()?.state, 'open');
  });

  it('SSE clients that leave: each cut stream closes its backend connection (a body cut mid-way cannot be reused), and none is left open', async () => {
    await waitFor(() => openStreamSockets.size === 0, 3_000, 'earlier stream connections are gone');
    const usedBefore = streamSockets.size;
    const closedBefore = streamsClosed;
    const rounds = 20;
    for (let i = 0; i < rounds; i++) {
      const { req, res } = await open(gw.url, '/api/events');
      await new Promise((r) => res.once('data', r));
      req.destroy();
      await waitFor(() => streamsClosed === closedBefore + i + 1, 3_000, 'the backend stream closes');
    }
    // One new backend connection per stream: undici cannot return a connection whose response was
    // cut mid-body to its pool, so each departure costs the next stream a TCP handshake.
    assert.equal(streamSockets.size - usedBefore, rounds);
    // Nothing leaks: every stream connection is closed on the backend side.
    await waitFor(() => openStreamSockets.size === 0, 3_000, 'backend stream sockets closed');
  });

  it('SSE streams the backend ends: their connection goes back to the stream pool, 20 streams on one connection', async () => {
    for (let i = 0; i < 20; i++) {
      const res = await request(`${gw.url}/api/short-events`);
      assert.equal(await res.body.text(), 'data: only\n\n');
    }
    assert.equal(shortStreamSockets.size, 1, 'the cost above is the cut, not the stream pool');
  });
});

describe('SSE clients that leave an HTTP/2 upstream (http2: true)', () => {
  const ca = createTestCa();
  const pair = ca.issue('localhost');
  let backend: Http2SecureServer;
  let gw: TestGateway;
  let sessions = 0;
  let streamsClosed = 0;

  before(async () => {
    backend = createSecureServer({ cert: readFileSync(pair.certFile), key: readFileSync(pair.keyFile) });
    backend.on('session', () => sessions++);
    backend.on('stream', (stream) => {
      stream.on('close', () => streamsClosed++);
      stream.respond({ ':status': 200, 'content-type': 'text/event-stream' });
      stream.write('data: first\n\n'); // never ends: the client leaves
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    const port = (backend.address() as AddressInfo).port;
    gw = await startGateway(`
upstreams:
  events: { http2: true, targets: ["https://localhost:${port}"] }
config:
  upstreamTls: { caFile: ${ca.caFile} }
routes:
  - { method: GET, route: /events, service: events, path: /events, isSSE: true, public: true }
`);
  });
  after(async () => {
    await gw?.close();
    await new Promise<void>((resolve) => backend.close(() => resolve()));
    ca.remove();
  });

  it('each cut stream is reset on its own (RST_STREAM) and its connection stays: 20 departures, not 20 connections', async () => {
    const rounds = 20;
    for (let i = 0; i < rounds; i++) {
      const { req, res } = await open(gw.url, '/api/events');
      await new Promise((r) => res.once('data', r));
      req.destroy();
      await waitFor(() => streamsClosed === i + 1, 3_000, 'the backend stream closes');
    }
    // Usually one; undici's pool may open a second while the first still counts as busy (it
    // carries one stream at a time), but a departure never costs its connection.
    assert.ok(sessions <= 2, `${sessions} backend connections for ${rounds} departures`);
  });
});
