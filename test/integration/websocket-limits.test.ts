/**
 * WebSocket tunnels under backends and clients that misbehave: a 101 that is not a WebSocket
 * handshake answer, a backend that stops reading, a client that stops reading. A raw TCP backend
 * plays each part, so the test controls exactly what it answers and whether it reads.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { bounded, handshakeHeaders, upgradeRequest, type UpgradeAnswer } from '../support/ws-backend.js';
import { acceptFor } from '../../src/endpoints/websocket.js';
import { STALL_MS } from '../../src/endpoints/tunnel.js';
import { Agent, request } from 'undici';
import { closeAll } from '../support/close-all.js';
import { waitFor } from '../support/wait-for.js';
import { createTestCa } from '../support/certs.js';

const MB = 1024 * 1024;

type Mode = 'bad-accept' | 'no-accept' | 'no-upgrade' | 'deaf' | 'flood';

interface RawWsBackend {
  readonly port: number;
  /** Backend sockets open now. */
  open(): number;
  /** Resolves when no backend socket is open (bounded). */
  allClosed(ms: number): Promise<void>;
  /** Makes every socket read again (a deaf socket notices nothing, a close included, until it reads). */
  resumeAll(): void;
  /** Resolves once a flooding socket has written nothing for `quietMs` (the gateway takes no more). */
  floodStuck(quietMs: number): Promise<void>;
  /** Resets every socket (RST). */
  resetAll(): void;
  close(): Promise<void>;
}

/**
 * Answers each upgrade by the first path segment: `/bad-accept`, `/no-accept`, `/no-upgrade` send
 * a 101 that is not a valid handshake answer; `/deaf` answers a valid 101 and never reads again;
 * `/flood` answers a valid 101 and writes 1 MiB chunks for as long as the gateway accepts them.
 */
async function startRawWsBackend(): Promise<RawWsBackend> {
  const sockets = new Set<Socket>();
  const waiters: (() => void)[] = [];
  let lastFloodWrite = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.once('close', () => {
      sockets.delete(socket);
      if (sockets.size === 0) for (const w of waiters.splice(0)) w();
    });
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      const mode = (/^GET \/([a-z-]+)/.exec(head)?.[1] ?? '') as Mode;
      const key = /\r\nsec-websocket-key: *([^\r]*)/i.exec(head)?.[1] ?? '';
      const valid = `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptFor(key)}\r\n\r\n`;
      switch (mode) {
        case 'bad-accept':
          socket.write(
            `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptFor('another key')}\r\n\r\nraw bytes`,
          );
          socket.resume();
          break;
        case 'no-accept':
          socket.write(
            'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nraw bytes',
          );
          socket.resume();
          break;
        case 'no-upgrade':
          socket.write(
            `HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptFor(key)}\r\n\r\nraw bytes`,
          );
          socket.resume();
          break;
        case 'deaf':
          socket.write(valid);
          socket.pause(); // reads nothing more: the gateway's writes pile up in the kernel, then stop
          break;
        case 'flood': {
          socket.write(valid);
          socket.resume();
          const chunk = Buffer.alloc(MB, 1);
          const pump = () => {
            lastFloodWrite = performance.now();
            while (!socket.destroyed && socket.write(chunk));
          };
          socket.on('drain', pump);
          pump();
          break;
        }
        default:
          socket.destroy();
      }
    };
    socket.on('data', onData);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    open: () => sockets.size,
    resumeAll: () => {
      for (const s of sockets) s.resume();
    },
    floodStuck: (quietMs) =>
      waitFor(() => lastFloodWrite > 0 && performance.now() - lastFloodWrite > quietMs, 5_000, 'the flood held back'),
    resetAll: () => {
      for (const s of sockets) s.resetAndDestroy();
    },
    allClosed: (ms) =>
      bounded(
        sockets.size === 0 ? Promise.resolve() : new Promise<void>((r) => waiters.push(r)),
        ms,
        `${sockets.size} backend sockets closed`,
      ),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Resolves once `socket` has had unsent bytes for `quietMs` without a 'drain' (the far side stopped taking them). */
async function writeUntilStuck(socket: Duplex, maxBytes: number, quietMs: number): Promise<number> {
  const chunk = Buffer.alloc(MB, 2);
  let written = 0;
  for (;;) {
    while (written < maxBytes && socket.write(chunk)) written += chunk.length;
    if (written >= maxBytes) return written;
    written += chunk.length;
    const drained = await Promise.race([
      new Promise<boolean>((r) => socket.once('drain', () => r(true))),
      new Promise<boolean>((r) => setTimeout(() => r(false), quietMs)),
    ]);
    if (!drained) return written;
  }
}

/** A client of the flooding backend that reads nothing. */
async function pausedFloodClient(gw: TestGateway): Promise<Duplex> {
  const answer = await upgradeRequest(gw.url, '/api/flood', handshakeHeaders());
  assert.equal(answer.kind, 'upgrade');
  const client = (answer as Extract<UpgradeAnswer, { kind: 'upgrade' }>).socket;
  client.on('error', () => {});
  client.pause();
  return client;
}

/** The gateway closed `client`'s socket: the client sees it as soon as it reads. */
async function closedOnceRead(client: Duplex): Promise<void> {
  const clientClosed = new Promise<void>((r) => client.once('close', () => r()));
  client.resume();
  await bounded(clientClosed, 2_000, 'client socket closed');
}

/** The next WebSocket tunnel the gateway closes, whichever side closed it. */
function nextStreamClose(gw: TestGateway): Promise<void> {
  return new Promise((resolve) => {
    const off = gw.gateway.events.on('stream:close', (e) => {
      if (e.kind !== 'websocket') return;
      off();
      resolve();
    });
  });
}

describe('WebSocket tunnel limits', () => {
  // Short enough for a test; the default (endpoints/tunnel.ts STALL_MS) is documented in docs/streaming.md.
  const stallMs = 400;
  let backend: RawWsBackend;
  let gw: TestGateway;

  before(async () => {
    backend = await startRawWsBackend();
    const routes = (['bad-accept', 'no-accept', 'no-upgrade', 'deaf', 'flood'] as const)
      .map(
        (m) => `  - { method: GET, route: /${m}, service: 127.0.0.1:${backend.port}, path: /${m}, isWebSocket: true }`,
      )
      .join('\n');
    gw = await startGateway(
      `routes:\n${routes}\nconfig:\n  circuitBreaker: { enabled: true, maxFailures: 100 }\n`,
      process.env,
      { tunnel: { stallMs } },
    );
  });
  after(() => closeAll(gw, backend));

  for (const mode of ['bad-accept', 'no-accept', 'no-upgrade'] as const) {
    it(`a 101 that is not a valid handshake answer (${mode}) is not tunneled: 502 JSON, backend closed, circuit failure`, async () => {
      const failuresBefore =
        gw.gateway.circuits.snapshot().find((c) => c.origin === `http://127.0.0.1:${backend.port}`)
          ?.consecutiveFailures ?? 0;
      const answer = await upgradeRequest(gw.url, `/api/${mode}`, handshakeHeaders());
      assert.equal(answer.kind, 'response', 'no 101 reached the client');
      if (answer.kind !== 'response') return;
      assert.equal(answer.status, 502);
      assert.equal(answer.headers['x-portico-error'], 'GW_UPSTREAM_BAD_UPGRADE');
      assert.deepEqual(JSON.parse(answer.body), {
        error: 'Backend answered the WebSocket upgrade with an invalid handshake',
        success: false,
      });
      assert.ok(!answer.body.includes('raw bytes'), 'nothing the backend sent after its 101 reached the client');
      await answer.closed;
      await backend.allClosed(2_000);
      const failuresAfter =
        gw.gateway.circuits.snapshot().find((c) => c.origin === `http://127.0.0.1:${backend.port}`)
          ?.consecutiveFailures ?? 0;
      assert.equal(failuresAfter, failuresBefore + 1, 'counted as a failure of the backend');
      assert.ok(
        gw.logs.some((l) => l.msg === 'upstream error' && l.kind === 'protocol'),
        'logged as a protocol error',
      );
    });
  }

  it('a backend that stops reading: bytes in flight stay bounded, and the tunnel closes both sides after stallMs once the client left', async () => {
    const answer = await upgradeRequest(gw.url, '/api/deaf', handshakeHeaders());
    assert.equal(answer.kind, 'upgrade');
    if (answer.kind !== 'upgrade') return;
    const client = answer.socket;
    client.on('error', () => {});
    const written = await writeUntilStuck(client, 256 * MB, 300);
    const accepted = written - client.writableLength;
    // The gateway holds one socket buffer per direction; the rest is the kernels' socket buffers.
    assert.ok(
      accepted < 32 * MB,
      `${Math.round(accepted / MB)} MB taken from the client while the backend reads nothing`,
    );
    assert.ok(written < 256 * MB, 'the client was held back');
    // The client leaves with a FIN, queued in its kernel behind the bytes the gateway no longer
    // takes (the backend being full): it never arrives, so the stall bound is what frees both sockets.
    const tunnelClosed = nextStreamClose(gw);
    client.destroy();
    await bounded(tunnelClosed, stallMs + 3_000, 'tunnel closed by the gateway');
    assert.ok(
      gw.logs.some((l) => l.msg === 'websocket tunnel closed: one side stopped reading' && l.notReading === 'backend'),
    );
    // The backend socket was closed by the gateway: the backend sees it as soon as it reads.
    backend.resumeAll();
    await backend.allClosed(2_000);
  });

  it('a client that stops reading: the backend is held back, then both sides close after stallMs', async () => {
    const client = await pausedFloodClient(gw);
    const opened = performance.now();
    await bounded(nextStreamClose(gw), stallMs + 3_000, 'tunnel closed by the gateway');
    assert.ok(performance.now() - opened >= stallMs, 'not before the stall bound');
    await backend.allClosed(2_000);
    await closedOnceRead(client);
    assert.ok(
      gw.logs.some((l) => l.msg === 'websocket tunnel closed: one side stopped reading' && l.notReading === 'client'),
    );
  });
});

/**
 * A handshake on a TLS connection over a TCP socket the test holds, so that the test can reset
 * that connection itself (a TLS socket's own destroy() sends a FIN).
 */
function tlsUpgrade(port: number, caFile: string, path: string): Promise<{ tls: Duplex; tcp: Socket }> {
  const tcp = connect(port, '127.0.0.1');
  tcp.on('error', () => {});
  return new Promise((resolve, reject) => {
    const req = httpsRequest({
      host: '127.0.0.1',
      port,
      path,
      headers: handshakeHeaders(),
      // No agent: with one, the agent's own connection is used instead.
      createConnection: () => tlsConnect({ socket: tcp, servername: 'localhost', ca: readFileSync(caFile) }),
    });
    req.on('upgrade', (_res, socket) => resolve({ tls: socket, tcp }));
    req.on('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
    req.on('error', reject);
    req.end();
  });
}

describe('WebSocket tunnel: a side that resets while the other is not reading', () => {
  // The tunnel bounds at their defaults: the departure must be seen long before STALL_MS.
  const ca = createTestCa();
  const server = ca.issue('localhost');
  let backend: RawWsBackend;
  let gw: TestGateway;
  let tlsGw: TestGateway;

  before(async () => {
    backend = await startRawWsBackend();
    const routes = `routes:\n${(['deaf', 'flood'] as const)
      .map(
        (m) => `  - { method: GET, route: /${m}, service: 127.0.0.1:${backend.port}, path: /${m}, isWebSocket: true }`,
      )
      .join('\n')}\n`;
    gw = await startGateway(routes);
    tlsGw = await startGateway(
      `${routes}config:\n  tls: { certFile: ${server.certFile}, keyFile: ${server.keyFile} }\n`,
    );
  });
  after(async () => {
    await closeAll(gw, tlsGw, backend);
    ca.remove();
  });

  /** Fills the tunnel until the client is held back, resets the client's TCP connection, and checks the aftermath. */
  async function resetWhileStuck(
    on: TestGateway,
    client: Duplex,
    reset: () => void,
    metrics: () => Promise<string>,
  ): Promise<void> {
    client.on('error', () => {});
    await writeUntilStuck(client, 256 * MB, 300);
    const tunnelClosed = nextStreamClose(on);
    const left = performance.now();
    reset();
    await bounded(tunnelClosed, 3_000, 'tunnel closed by the gateway');
    assert.ok(performance.now() - left < STALL_MS / 10, 'long before the stall bound');
    assert.ok(
      !on.logs.some((l) => l.msg === 'websocket tunnel closed: one side stopped reading'),
      'a departure, not a stall',
    );
    assert.match(await metrics(), /^portico_open_streams\{route="\/deaf",kind="websocket"\} 0$/m);
    // The backend socket was closed by the gateway: the backend sees it as soon as it reads.
    backend.resumeAll();
    await backend.allClosed(2_000);
  }

  it('a client that resets is noticed within a second, not at the stall bound: both sides closed, the stream counted closed', async () => {
    const answer = await upgradeRequest(gw.url, '/api/deaf', handshakeHeaders());
    assert.equal(answer.kind, 'upgrade');
    if (answer.kind !== 'upgrade') return;
    const client = answer.socket as Socket;
    await resetWhileStuck(
      gw,
      client,
      () => client.resetAndDestroy(),
      async () => (await request(`${gw.url}/metrics`)).body.text(),
    );
  });

  it('a backend that resets while its client is not reading is noticed within a second as well', async () => {
    const client = await pausedFloodClient(gw);
    await backend.floodStuck(300);
    const tunnelClosed = nextStreamClose(gw);
    const reset = performance.now();
    backend.resetAll();
    await bounded(tunnelClosed, 3_000, 'tunnel closed by the gateway');
    assert.ok(performance.now() - reset < STALL_MS / 10, 'long before the stall bound');
    await closedOnceRead(client);
  });

  it('the same on a TLS listener', async () => {
    const { tls, tcp } = await tlsUpgrade(tlsGw.port, ca.caFile, '/api/deaf');
    const dispatcher = new Agent({ connect: { ca: readFileSync(ca.caFile), servername: 'localhost' } });
    await resetWhileStuck(
      tlsGw,
      tls,
      () => tcp.resetAndDestroy(),
      async () => (await request(`https://127.0.0.1:${tlsGw.port}/metrics`, { dispatcher })).body.text(),
    );
    await dispatcher.close();
  });
});
