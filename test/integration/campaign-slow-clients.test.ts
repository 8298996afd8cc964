/**
 * Slow and greedy clients, in numbers, against the real gateway on 127.0.0.1: slowloris (a head
 * one byte at a time), idle connections, bodies that trickle or stop, clients that never read, a
 * thousand WebSockets opened and closed, and a flood into a WebSocket backend that reads nothing.
 *
 * What passes: memory stays bounded (measured as bytes in flight between what one side sent and
 * what the other received, not RSS), a normal request meanwhile is answered 200 quickly, and every
 * socket is released at the end (the backend's open sockets return to zero or idle). Every wait is
 * bounded by the configured timeouts plus a margin; the whole file runs in seconds.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { bounded, startWsBackend, type WsBackend } from '../support/ws-backend.js';
import { waitFor } from '../support/wait-for.js';
import { acceptFor } from '../../src/endpoints/websocket.js';

const MB = 1024 * 1024;
/** The configured client timeouts (seconds in the YAML below). */
const HEADER_MS = 1_000;
const BODY_IDLE_MS = 1_000;
/** Node checks header deadlines on a timer (server/limits.ts: a quarter of headersTimeout). */
const CHECK_MS = HEADER_MS / 4;
/** Scheduling slack on a loaded 2-core machine. */
const MARGIN_MS = 1_500;
const STALL_MS = 500;
/** The answer clients never read. */
const BIG = 64 * MB;

/** The largest socket buffer the kernel grants (the third figure of net.ipv4.tcp_wmem). */
function tcpBufferMax(name: 'tcp_wmem'): number {
  try {
    const max = Number(readFileSync(`/proc/sys/net/ipv4/${name}`, 'utf8').trim().split(/\s+/)[2]);
    return Number.isFinite(max) && max > 0 ? max : 4 * MB;
  } catch {
    return 4 * MB; // not Linux: Linux's default maximum
  }
}

/** A raw client connection that records what it got and when it closed. */
interface RawClient {
  readonly socket: Socket;
  received: string;
  closedAt: number | undefined;
}

function rawClient(port: number): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const c: RawClient = { socket, received: '', closedAt: undefined };
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      if (c.received.length < 4096) c.received += d;
    });
    socket.on('error', () => {});
    socket.once('close', () => (c.closedAt = performance.now()));
    socket.once('connect', () => resolve(c));
    socket.once('error', reject);
  });
}

/** GET through the gateway; resolves with the status and how long the answer took. */
async function timedGet(url: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await request(url, { headersTimeout: 5_000, bodyTimeout: 5_000 });
  await res.body.text();
  return { status: res.statusCode, ms: performance.now() - started };
}

describe('campaign: slow and greedy clients', () => {
  let backend: TestBackend;
  let ws: WsBackend;
  let deaf: { server: Server; port: number; sockets: Set<Socket> };
  let gw: TestGateway;
  /** Backend requests whose response has not closed yet. */
  let backendOpen = 0;
  /** Bytes the /big handler managed to write, per response. */
  const bigWritten: number[] = [];

  before(async () => {
    backend = await startBackend(
      (req, res) => {
        backendOpen++;
        res.once('close', () => backendOpen--);
        if (req.url === '/big') {
          // BIG bytes, written as fast as the client side takes them (backpressure respected).
          const slot = bigWritten.push(0) - 1;
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(BIG) });
          const chunk = Buffer.alloc(256 * 1024, 3);
          const pump = () => {
            while (bigWritten[slot]! < BIG && !res.destroyed) {
              bigWritten[slot]! += chunk.length;
              if (!res.write(chunk)) return void res.once('drain', pump);
            }
            if (!res.destroyed) res.end();
          };
          pump();
          return;
        }
        req.resume();
        req.once('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"ok":true}');
        });
      },
      { bufferBody: false },
    );
    ws = await startWsBackend();
    // A WebSocket backend that completes the handshake and then reads nothing.
    const deafSockets = new Set<Socket>();
    const deafServer = createServer((s) => {
      deafSockets.add(s);
      s.on('error', () => {});
      s.once('close', () => deafSockets.delete(s));
      let head = '';
      const onData = (d: Buffer) => {
        head += d.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        s.off('data', onData);
        const key = /\r\nsec-websocket-key: *([^\r]*)/i.exec(head)?.[1] ?? '';
        s.write(
          `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptFor(key)}\r\n\r\n`,
        );
        s.pause();
      };
      s.on('data', onData);
    });
    await new Promise<void>((r) => deafServer.listen(0, '127.0.0.1', r));
    deaf = { server: deafServer, port: (deafServer.address() as AddressInfo).port, sockets: deafSockets };
    gw = await startGateway(
      `
routes:
  - { method: GET, route: /ok, service: ${backend.host}, path: /ok }
  - { method: POST, route: /upload, service: ${backend.host}, path: /upload }
  - { method: GET, route: /big, service: ${backend.host}, path: /big }
  - { method: GET, route: /ws, service: ${ws.host}, path: /ws, isWebSocket: true }
  - { method: GET, route: /deaf, service: 127.0.0.1:${deaf.port}, path: /deaf, isWebSocket: true }
config:
  timeouts:
    clientHeaderSec: ${HEADER_MS / 1000}
    clientBodySec: ${BODY_IDLE_MS / 1000}
`,
      process.env,
      { tunnel: { stallMs: STALL_MS } },
    );
  });
  after(async () => {
    await gw?.close();
    await backend?.close();
    await ws?.close();
    for (const s of deaf?.sockets ?? []) s.destroy();
    await new Promise<void>((r) => (deaf ? deaf.server.close(() => r()) : r()));
  });

  it('slowloris, idle connections and stalled bodies: cut within the configured timeouts while a normal GET is answered at once', async () => {
    const started = performance.now();
    // 50 heads sent one byte every 100 ms: never complete within clientHeaderSec.
    const slowloris = await Promise.all(Array.from({ length: 50 }, () => rawClient(gw.port)));
    const head = 'GET /api/ok HTTP/1.1\r\nHost: x\r\nX-Padding: ' + 'a'.repeat(200) + '\r\n\r\n';
    let sent = 0;
    const drip = setInterval(() => {
      for (const c of slowloris) if (c.closedAt === undefined && sent < head.length) c.socket.write(head[sent]!);
      sent++;
    }, 100);
    // 100 connections that never send a byte.
    const idle = await Promise.all(Array.from({ length: 100 }, () => rawClient(gw.port)));
    // 20 uploads that send half their body and stop: body silence past clientBodySec.
    const stalled = await Promise.all(Array.from({ length: 20 }, () => rawClient(gw.port)));
    for (const c of stalled)
      c.socket.write('POST /api/upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n' + 'b'.repeat(500));

    // Meanwhile, a normal client is served at once, again and again.
    const answers: { status: number; ms: number }[] = [];
    for (let i = 0; i < 10; i++) {
      answers.push(await timedGet(`${gw.url}/api/ok`));
      // Spread over time on purpose: the slow clients keep their pressure on between two requests.
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(
      answers.every((a) => a.status === 200),
      'every normal GET answered 200',
    );
    const slowest = Math.max(...answers.map((a) => a.ms));
    // Well before the slow clients are cut (HEADER_MS): they do not hold anyone up.
    assert.ok(slowest < HEADER_MS, `slowest normal GET took ${Math.round(slowest)} ms`);

    // Every slow connection is cut within its timeout (plus Node's check interval and a margin).
    const bound = Math.max(HEADER_MS, BODY_IDLE_MS) + CHECK_MS + MARGIN_MS;
    await waitFor(
      () => [...slowloris, ...idle, ...stalled].every((c) => c.closedAt !== undefined),
      bound,
      'all slow connections closed',
    );
    clearInterval(drip);
    assert.ok(sent < head.length, 'the slowloris heads never completed');
    for (const c of [...slowloris, ...idle, ...stalled]) {
      assert.ok(c.closedAt! - started < bound + 1_000, `closed after ${Math.round(c.closedAt! - started)} ms`);
    }
    assert.ok(
      stalled.every((c) => c.received.startsWith('HTTP/1.1 408')),
      'a stalled body is answered 408',
    );
    // Nothing is left on the backend side: no request of theirs in flight.
    await waitFor(() => backendOpen === 0, 2_000, 'no backend request in flight');
  });

  it('uploads that trickle (never silent for clientBodySec): buffered by the gateway, the backend never sees them, others are served', async () => {
    const uploads = await Promise.all(Array.from({ length: 20 }, () => rawClient(gw.port)));
    for (const c of uploads) c.socket.write('POST /api/upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n');
    // One byte every BODY_IDLE_MS / 5: never a silence the body timeout cuts, never a whole body.
    const drip = setInterval(() => {
      for (const c of uploads) if (c.closedAt === undefined) c.socket.write('u');
    }, BODY_IDLE_MS / 5);
    try {
      const answers: number[] = [];
      const until = performance.now() + 1.5 * BODY_IDLE_MS;
      while (performance.now() < until) {
        const a = await timedGet(`${gw.url}/api/ok`);
        assert.equal(a.status, 200);
        answers.push(a.ms);
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(Math.max(...answers) < HEADER_MS, `slowest normal GET took ${Math.round(Math.max(...answers))} ms`);
      assert.ok(
        uploads.every((c) => c.closedAt === undefined),
        'a steady trickle is not cut by the body silence limit',
      );
      // Request buffering: no backend call, so no pooled backend connection, while a body trickles.
      assert.equal(backend.seen.filter((r) => r.url === '/upload').length, 0);
    } finally {
      clearInterval(drip);
      for (const c of uploads) c.socket.destroy();
    }
    await waitFor(() => uploads.every((c) => c.closedAt !== undefined), 2_000, 'every upload connection closed');
    assert.equal(
      backend.seen.filter((r) => r.url === '/upload').length,
      0,
      'an upload abandoned half-way never reaches the backend',
    );
    assert.equal(backendOpen, 0);
  });

  it('clients that never read a 64 MiB answer: bytes in flight stay bounded, others are served, all released when they leave', async () => {
    const readers = 10;
    const clients = await Promise.all(Array.from({ length: readers }, () => rawClient(gw.port)));
    const before = bigWritten.length;
    for (const c of clients) {
      c.socket.pause(); // never reads
      c.socket.write('GET /api/big HTTP/1.1\r\nHost: x\r\n\r\n');
    }
    await waitFor(() => bigWritten.length === before + readers, 3_000, 'every big response started');
    // Wait until the backends' writes stop moving: everything in flight is then held somewhere.
    let last = -1;
    await waitFor(
      () => {
        const now = bigWritten.slice(before).reduce((a, b) => a + b, 0);
        const settled = now === last;
        last = now;
        return settled;
      },
      5_000,
      'backpressure reached the backend',
    );
    // The clients read nothing, so everything written is in flight: kernel buffers plus what the
    // gateway holds. Without backpressure the whole 32 MiB per client would be pulled.
    // The kernels hold a few MB per connection (socket buffers on loopback: the backend's send
    // buffer of up to net.ipv4.tcp_wmem's maximum, receive buffers that grow only as data is read);
    // the gateway adds at most a socket buffer and a chunk. Ignoring backpressure, it would pull
    // the whole answer.
    const bound = 2 * tcpBufferMax('tcp_wmem') + 8 * MB;
    assert.ok(bound < BIG / 2, 'the answer is far larger than the bound, so the bound means something');
    const perClient = bigWritten.slice(before);
    assert.ok(
      perClient.every((bytes) => bytes < bound),
      `MB in flight per non-reading client: ${perClient.map((b) => (b / MB).toFixed(1)).join(', ')} (bound ${(bound / MB).toFixed(1)})`,
    );
    const meanwhile = await timedGet(`${gw.url}/api/ok`);
    assert.equal(meanwhile.status, 200);
    assert.ok(meanwhile.ms < HEADER_MS, `normal GET took ${Math.round(meanwhile.ms)} ms`);
    for (const c of clients) c.socket.destroy();
    await waitFor(() => backendOpen === 0, 3_000, 'every backend response released');
  });

  // Gateway, backend and clients share this one process: 600 keeps the file within seconds.
  it('600 WebSockets opened and closed: every tunnel and backend socket released', async () => {
    const total = 600;
    const concurrency = 100;
    let opened = 0;
    let closedStreams = 0;
    const off = gw.gateway.events.on('stream:close', (e) => {
      if (e.kind === 'websocket') closedStreams++;
    });
    const one = async (i: number) => {
      const c = await rawClient(gw.port);
      const key = Buffer.from(String(i).padStart(16, '0')).toString('base64'); // 16 bytes, as RFC 6455 asks
      c.socket.write(
        `GET /api/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\n\r\n`,
      );
      await bounded(
        new Promise<void>((resolve) => {
          const check = () => {
            if (!c.received.includes('\r\n\r\n')) return;
            c.socket.off('data', check);
            resolve();
          };
          c.socket.on('data', check);
          check();
        }),
        3_000,
        '101',
      );
      assert.ok(c.received.startsWith('HTTP/1.1 101'), c.received.slice(0, 40));
      assert.ok(c.received.toLowerCase().includes(`sec-websocket-accept: ${acceptFor(key).toLowerCase()}`));
      opened++;
      c.socket.destroy();
    };
    for (let i = 0; i < total; i += concurrency) {
      await Promise.all(Array.from({ length: Math.min(concurrency, total - i) }, (_, j) => one(i + j)));
    }
    assert.equal(opened, total);
    await waitFor(() => closedStreams === total, 5_000, 'every tunnel closed');
    await waitFor(() => ws.sockets.every((s) => s.readyState === s.CLOSED), 5_000, 'every backend WebSocket closed');
    off();
  });

  it('a flood into a WebSocket backend that reads nothing: bounded in flight, other clients served, both sides closed after the stall bound', async () => {
    const c = await rawClient(gw.port);
    c.socket.write(
      `GET /api/deaf HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${Buffer.from('flood-key-012345').toString('base64')}\r\n\r\n`,
    );
    await waitFor(() => c.received.startsWith('HTTP/1.1 101') && c.received.includes('\r\n\r\n'), 3_000, '101');
    const tunnelClosed = new Promise<void>((resolve) => {
      const off = gw.gateway.events.on('stream:close', (e) => {
        if (e.kind !== 'websocket') return;
        off();
        resolve();
      });
    });
    // Write until the gateway stops taking bytes (its backend is full), at most 256 MiB.
    const chunk = Buffer.alloc(MB, 9);
    let written = 0;
    let stuck = false;
    while (!stuck && written < 256 * MB) {
      written += chunk.length;
      if (!c.socket.write(chunk)) {
        // "Nothing happens": no 'drain' within a bounded quiet period means the gateway stopped reading.
        stuck = !(await Promise.race([
          new Promise<boolean>((r) => c.socket.once('drain', () => r(true))),
          new Promise<boolean>((r) => setTimeout(() => r(false), 200)),
        ]));
      }
    }
    assert.ok(stuck, 'the client was held back');
    const inFlight = written - c.socket.writableLength;
    assert.ok(inFlight < 32 * MB, `${Math.round(inFlight / MB)} MB in flight into a backend that reads nothing`);
    const meanwhile = await timedGet(`${gw.url}/api/ok`);
    assert.equal(meanwhile.status, 200);
    await bounded(tunnelClosed, STALL_MS + MARGIN_MS + 1_000, 'tunnel closed after the stall bound');
    // The gateway closed both sockets: each side notices as soon as it reads.
    for (const s of deaf.sockets) s.resume();
    c.socket.resume();
    await waitFor(() => deaf.sockets.size === 0, 2_000, 'backend sockets closed');
    await waitFor(() => c.closedAt !== undefined, 2_000, 'client socket closed');
  });
});
