/**
 * A gateway that does not release its upstream socket when the client aborts mid-response leaks
 * connections until it hangs. Clients here leave while the backend is still
 * streaming (or has not answered yet); every backend response must see its client go, the
 * backend's open sockets must fall back to at most the pool size, and the gateway must keep serving
 * with its whole pool (64 connections per origin by default). The same over HTTP/2, where a
 * client leaves by cancelling a stream or dropping the whole connection.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { request } from 'undici';
import { connect as connectHttp2, constants as http2Constants } from 'node:http2';
import { readFileSync } from 'node:fs';
import { createTestCa, type TestCa } from '../support/certs.js';
import { h2request } from '../support/http2.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/wait-for.js';
import { closeAll } from '../support/close-all.js';

const POOL = 64; // config.limits.connectionsPerOrigin default
const CHUNK = Buffer.alloc(16 * 1024, 'x');

interface SlowBackend {
  readonly host: string;
  readonly server: Server;
  /** Requests received per path. */
  readonly started: Map<string, number>;
  /** Responses whose client went away before the body ended. */
  closedEarly: number;
  /** Responses not closed yet. */
  inFlight: number;
  /** X-Request-ID of the `/stall` requests the backend holds. */
  readonly held: Set<string>;
  readonly sockets: Set<Socket>;
  close(): Promise<void>;
}

/**
 * `/slow`: 200 with a declared 64 MB body, one 16 KB chunk at once and one more every 10 s: slow
 * enough that only an explicit abort (not a failed write of the next chunk) frees the connection.
 * `/stall`: never answers until the client leaves. `/small`: `{"ok":true}`.
 */
async function startSlowBackend(): Promise<SlowBackend> {
  const sockets = new Set<Socket>();
  const b = { started: new Map<string, number>(), closedEarly: 0, inFlight: 0, held: new Set<string>(), sockets };
  const server = createServer((req, res: ServerResponse) => {
    const path = req.url ?? '';
    b.started.set(path, (b.started.get(path) ?? 0) + 1);
    if (path === '/small') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 11 }).end('{"ok":true}');
      return;
    }
    b.inFlight++;
    const id = String(req.headers['x-request-id']);
    if (path === '/stall') b.held.add(id);
    let timer: NodeJS.Timeout | undefined;
    res.once('close', () => {
      clearInterval(timer);
      b.held.delete(id);
      b.inFlight--;
      if (!res.writableFinished) b.closedEarly++;
    });
    if (path === '/slow') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 64 * 1024 * 1024 });
      res.write(CHUNK);
      timer = setInterval(() => res.write(CHUNK), 10_000);
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(b, {
    host: `127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  });
}

/** A raw client: sends GET, waits for the status line and the first body bytes, then vanishes. */
function abortingClient(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let seen = '';
    socket.setEncoding('latin1');
    socket.on('connect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
    socket.on('data', (chunk: string) => {
      seen += chunk;
      const end = seen.indexOf('\r\n\r\n');
      if (end >= 0 && seen.length > end + 4) {
        socket.destroy();
        resolve(seen.slice(0, seen.indexOf('\r\n')));
      }
    });
    socket.on('error', reject);
    socket.on('close', () =>
      reject(new Error(`closed before the first body bytes: ${JSON.stringify(seen.slice(0, 200))}`)),
    );
  });
}

/** Runs `count` tasks, `concurrency` at a time. */
async function inParallel<T>(count: number, concurrency: number, task: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        results.push(await task());
      }
    }),
  );
  return results;
}

const abortedLogs = (gw: TestGateway, path: string) =>
  gw.logs.filter((l) => l.msg === 'request' && l.path === path && l.aborted === true).length;

describe('client aborts release the upstream connection', () => {
  let backend: SlowBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startSlowBackend();
    gw = await startGateway(`
routes:
  - { method: GET, route: /slow, service: ${backend.host}, path: /slow }
  - { method: GET, route: /stall, service: ${backend.host}, path: /stall }
  - { method: GET, route: /small, service: ${backend.host}, path: /small }
`);
  });
  after(() => closeAll(gw, backend));

  it(
    '1,000 clients leaving mid-body leave no upstream socket behind, and the gateway still serves',
    { timeout: 20_000 },
    async () => {
      const statuses = await inParallel(1000, 100, () => abortingClient(gw.port, '/api/slow'));
      assert.equal(statuses.length, 1000);
      assert.deepEqual(new Set(statuses), new Set(['HTTP/1.1 200 OK']));
      assert.equal(backend.started.get('/slow'), 1000);

      await waitFor(
        () => backend.closedEarly === 1000 && backend.inFlight === 0,
        3_000,
        'every backend response sees its client leave',
      );
      await waitFor(() => backend.sockets.size <= POOL, 3_000, 'backend sockets fall to the pool size or less');
      await waitFor(() => abortedLogs(gw, '/api/slow') === 1000, 3_000, 'the gateway logs 1,000 aborted requests');
      assert.equal(backend.closedEarly, 1000);

      // The whole pool is free again: POOL clients at once all get their first bytes.
      const again = await inParallel(POOL, POOL, () => abortingClient(gw.port, '/api/slow'));
      assert.equal(again.length, POOL);
      assert.deepEqual(new Set(again), new Set(['HTTP/1.1 200 OK']));
      await waitFor(
        () => backend.closedEarly === 1000 + POOL && backend.inFlight === 0,
        3_000,
        'the second wave is released too',
      );

      const res = await request(`${gw.url}/api/small`);
      assert.equal(res.statusCode, 200);
      assert.equal(await res.body.text(), '{"ok":true}');
    },
  );

  it(
    'clients leaving before the backend answers free their connection, and queued requests never reach it',
    { timeout: 20_000 },
    async () => {
      const clients = new Map<string, Socket>();
      await Promise.all(
        Array.from({ length: 200 }, (_, i) => {
          const id = `stall-${i}`;
          const s = connect(gw.port, '127.0.0.1');
          s.on('error', () => undefined);
          clients.set(id, s);
          return new Promise<void>((sent) =>
            s.on('connect', () =>
              s.write(`GET /api/stall HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-ID: ${id}\r\n\r\n`, () => sent()),
            ),
          );
        }),
      );
      const closedBefore = backend.closedEarly;
      // The pool holds POOL requests at the backend; the other 136 wait in the gateway's queue.
      await waitFor(
        () => backend.started.get('/stall') === POOL && backend.held.size === POOL,
        3_000,
        'the pool is full at the backend',
      );

      // The queued clients leave first: their requests must be dropped from the queue, never sent.
      for (const [id, s] of clients) if (!backend.held.has(id)) s.destroy();
      await waitFor(() => abortedLogs(gw, '/api/stall') === 200 - POOL, 3_000, 'the gateway logs 136 aborted requests');
      assert.equal(backend.closedEarly, closedBefore);
      // Then the clients whose requests the backend holds.
      for (const id of backend.held) clients.get(id)?.destroy();
      await waitFor(
        () => backend.closedEarly === closedBefore + POOL && backend.inFlight === 0,
        3_000,
        'every held backend request sees its client leave',
      );
      await waitFor(() => abortedLogs(gw, '/api/stall') === 200, 3_000, 'the gateway logs 200 aborted requests');
      await waitFor(() => backend.sockets.size <= POOL, 3_000, 'backend sockets fall to the pool size or less');

      // The pool serves in order: had the 136 aborted requests stayed queued, they would reach the
      // backend before this one.
      const res = await request(`${gw.url}/api/small`);
      assert.equal(res.statusCode, 200);
      assert.equal(await res.body.text(), '{"ok":true}');
      assert.equal(backend.started.get('/stall'), POOL);
    },
  );
});

for (const over of ['h2c', 'h2 over TLS'] as const)
  describe(`HTTP/2 clients that leave release the upstream connection (${over})`, () => {
    let backend: SlowBackend;
    let gw: TestGateway;
    let ca: TestCa | undefined;
    let origin: string;
    const http2Connect = (url: string) => connectHttp2(url, ca === undefined ? {} : { ca: readFileSync(ca.caFile) });
    before(async () => {
      backend = await startSlowBackend();
      let listener = '  http2: { cleartext: true }';
      if (over !== 'h2c') {
        ca = createTestCa();
        const cert = ca.issue('localhost');
        listener = `  tls: { certFile: ${cert.certFile}, keyFile: ${cert.keyFile} }`;
      }
      gw = await startGateway(`
config:
${listener}
routes:
  - { method: GET, route: /slow, service: ${backend.host}, path: /slow }
  - { method: GET, route: /stall, service: ${backend.host}, path: /stall }
  - { method: GET, route: /small, service: ${backend.host}, path: /small }
`);
      origin = over === 'h2c' ? gw.url : `https://localhost:${gw.port}`;
    });
    after(async () => {
      await gw?.close();
      await backend?.close();
      ca?.remove();
    });

    it(
      'streams cancelled mid-body, and connections dropped mid-request, leave nothing behind',
      { timeout: 20_000 },
      async () => {
        // 200 streams on 4 connections, each cancelled (RST_STREAM) once its first body bytes arrive.
        const sessions = Array.from({ length: 4 }, () => http2Connect(origin));
        await Promise.all(
          Array.from({ length: 200 }, (_, i) => {
            const stream = sessions[i % 4]!.request({ ':path': '/api/slow' });
            return new Promise<void>((resolve, reject) => {
              stream.once('data', () => {
                stream.close(http2Constants.NGHTTP2_CANCEL);
                resolve();
              });
              stream.once('error', reject);
            });
          }),
        );
        await waitFor(
          () => backend.closedEarly === 200 && backend.inFlight === 0,
          3_000,
          'every backend response sees its stream go',
        );
        await waitFor(() => abortedLogs(gw, '/api/slow') === 200, 3_000, 'the gateway logs 200 aborted requests');

        // A connection that goes away with requests the backend holds.
        const doomed = http2Connect(origin);
        doomed.on('error', () => undefined);
        for (let i = 0; i < 20; i++) doomed.request({ ':path': '/api/stall' }).on('error', () => undefined);
        await waitFor(() => backend.held.size === 20, 3_000, 'the backend holds the 20 requests');
        doomed.destroy();
        await waitFor(
          () => backend.inFlight === 0 && backend.held.size === 0,
          3_000,
          'the held requests see their client go',
        );
        await waitFor(() => abortedLogs(gw, '/api/stall') === 20, 3_000, 'the gateway logs 20 aborted requests');
        await waitFor(() => backend.sockets.size <= POOL, 3_000, 'backend sockets fall to the pool size or less');

        const small = await h2request(sessions[0]!, '/api/small');
        assert.equal(small.status, 200);
        assert.equal(small.body, '{"ok":true}');
        for (const s of sessions) s.close();
      },
    );
  });
