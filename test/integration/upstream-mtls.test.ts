/**
 * Client certificates to backends (docs/upstreams.md "Client certificates to backends") with
 * real TLS: a CA, a server certificate and two client certificates made with openssl, and a
 * Node https backend that asks for a client certificate and refuses connections without a valid
 * one. Every kind of backend call goes through the upstream's pools or its TLS settings:
 * standard, SSE, mapping, aggregation, WebSocket handshakes, named upstreams; a reload to other
 * files gives new connections the new certificate and closes the idle ones of the old.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { createTestCa, type TestCa } from '../support/certs.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { bounded } from '../support/ws-backend.js';
import { waitFor } from '../support/wait-for.js';

interface MtlsBackend {
  readonly port: number;
  /** Every TLS connection the backend accepted: the client certificate's CN, and whether it is still open. */
  readonly connections: { readonly cn: string; open: boolean }[];
  close(): Promise<void>;
}

/** The CN of the client certificate a connection presented. */
function peerCn(socket: TLSSocket): string {
  return String(socket.getPeerCertificate().subject?.CN ?? '');
}

/** An https backend that requires a client certificate signed by `ca` and says whose it saw. */
async function startMtlsBackend(ca: TestCa, server: { certFile: string; keyFile: string }): Promise<MtlsBackend> {
  const connections: { cn: string; open: boolean }[] = [];
  const https: Server = createHttpsServer(
    {
      cert: readFileSync(server.certFile),
      key: readFileSync(server.keyFile),
      ca: readFileSync(ca.caFile),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      const cn = peerCn(req.socket as TLSSocket);
      const path = req.url ?? '';
      if (path === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`data: ${cn}\n\n`);
        return;
      }
      const body = path === '/orders' ? [{ id: 1, userId: 7 }] : { cn, path };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    },
  );
  https.on('secureConnection', (socket: TLSSocket) => {
    const seen = { cn: peerCn(socket), open: true };
    connections.push(seen);
    socket.on('close', () => (seen.open = false));
  });
  const wss = new WebSocketServer({ noServer: true });
  https.on('upgrade', (req, socket: Duplex, head) => {
    wss.handleUpgrade(req, socket, head, (ws) => ws.send(peerCn(req.socket as TLSSocket)));
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  return {
    port: (https.address() as AddressInfo).port,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        https.closeAllConnections();
        https.close(() => resolve());
      }),
  };
}

/** The first message a WebSocket route's backend sends: the CN it saw. */
function firstMessage(url: string): Promise<string> {
  const ws = new WebSocket(url);
  return bounded(
    new Promise<string>((resolve, reject) => {
      ws.once('message', (data: Buffer) => {
        resolve(data.toString('utf8'));
        ws.close();
      });
      ws.once('unexpected-response', (_req, res) => reject(new Error(`unexpected response ${res.statusCode}`)));
      ws.once('error', reject);
    }),
    5_000,
    'the backend greeting',
  );
}

describe('client certificates to backends', () => {
  let ca: TestCa;
  let backend: MtlsBackend;
  let gw: TestGateway;
  let clientA: { certFile: string; keyFile: string };
  let clientB: { certFile: string; keyFile: string };
  let service: string;

  /** The gateway's configuration: `upstreamTls` for services, `billingTls` for the named upstream. */
  const config = (upstreamTls: string, billingTls: string) => `
upstreams:
  billing:
    targets: ["${service}"]
    http2: true
    tls: ${billingTls}
config:
  upstreamTls: ${upstreamTls}
routes:
  - { method: GET, route: /whoami, service: "${service}", path: /whoami }
  - { method: GET, route: /events, service: "${service}", path: /events, isSSE: true }
  - method: GET
    route: /orders
    service: "${service}"
    path: /orders
    mapping: [{ path: "/users/{userId}", service: "${service}", tag: user }]
  - method: GET
    route: /both
    backends:
      - { service: "${service}", path: /a, group: a }
      - { service: billing, path: /b, group: b }
  - { method: GET, route: /feed, service: "${service}", path: /feed, isWebSocket: true }
  - { method: GET, route: /billing/whoami, service: billing, path: /whoami }
`;
  const withCert = (c: { certFile: string; keyFile: string }) =>
    `{ caFile: ${ca.caFile}, certFile: ${c.certFile}, keyFile: ${c.keyFile} }`;

  before(async () => {
    ca = createTestCa();
    const server = ca.issue('localhost');
    clientA = ca.issue('portico-a', 'client-a');
    clientB = ca.issue('portico-b', 'client-b');
    backend = await startMtlsBackend(ca, server);
    service = `https://localhost:${backend.port}`;
    gw = await startGateway(config(withCert(clientA), withCert(clientB)));
  });
  after(async () => {
    await gw?.close();
    await backend?.close();
    ca?.remove();
  });

  const getJson = async (path: string) => {
    const r = await gw.get(path);
    assert.equal(r.status, 200, `${path}: ${String(r.body)}`);
    return JSON.parse(String(r.body)) as unknown;
  };

  it('presents config.upstreamTls.certFile to a service on every kind of call', async () => {
    assert.deepEqual(await getJson('/api/whoami'), { cn: 'portico-a', path: '/whoami' });
    const events = await gw.get('/api/events');
    assert.equal(events.status, 200);
    assert.equal(String(events.body), 'data: portico-a\n\n');
    assert.deepEqual(await getJson('/api/orders'), [{ id: 1, userId: 7, user: { cn: 'portico-a', path: '/users/7' } }]);
    assert.equal(await firstMessage(`ws://127.0.0.1:${gw.port}/api/feed`), 'portico-a');
  });

  it("presents a named upstream's own certificate to its targets", async () => {
    assert.deepEqual(await getJson('/api/billing/whoami'), { cn: 'portico-b', path: '/whoami' });
    assert.deepEqual(await getJson('/api/both'), {
      a: { cn: 'portico-a', path: '/a' },
      b: { cn: 'portico-b', path: '/b' },
    });
  });

  it('without a client certificate the backend refuses the connection: 502', async () => {
    gw.reload(config(`{ caFile: ${ca.caFile} }`, `{ caFile: ${ca.caFile} }`));
    for (const path of ['/api/whoami', '/api/events', '/api/orders', '/api/billing/whoami', '/api/both']) {
      const r = await gw.get(path);
      assert.equal(r.status, 502, path);
    }
    await assert.rejects(firstMessage(`ws://127.0.0.1:${gw.port}/api/feed`), /unexpected response 502/);
  });

  it('a reload to other files: new connections present the new certificate, idle old ones close', async () => {
    gw.reload(config(withCert(clientA), withCert(clientB)));
    assert.deepEqual(await getJson('/api/whoami'), { cn: 'portico-a', path: '/whoami' });
    const old = backend.connections.filter((c) => c.cn === 'portico-a' && c.open);
    assert.ok(old.length > 0);
    gw.reload(config(withCert(clientB), withCert(clientA)));
    assert.deepEqual(await getJson('/api/whoami'), { cn: 'portico-b', path: '/whoami' });
    // The services' idle keep-alive connections made with client A's certificate close at once
    // (undici would keep an idle one 4 s).
    await waitFor(() => old.every((c) => !c.open), 1_000, 'the old connections close');
    assert.deepEqual(await getJson('/api/billing/whoami'), { cn: 'portico-a', path: '/whoami' });
    const events = await gw.get('/api/events');
    assert.equal(String(events.body), 'data: portico-b\n\n');
    assert.equal(await firstMessage(`ws://127.0.0.1:${gw.port}/api/feed`), 'portico-b');
    // The services' keep-alive connections made with client A's certificate were retired.
  });

  it('a reload that changes nothing keeps the connections', async () => {
    const before = backend.connections.length;
    assert.deepEqual(await getJson('/api/whoami'), { cn: 'portico-b', path: '/whoami' });
    gw.reload(config(withCert(clientB), withCert(clientA)));
    assert.deepEqual(await getJson('/api/whoami'), { cn: 'portico-b', path: '/whoami' });
    assert.equal(backend.connections.length, before);
  });
});
