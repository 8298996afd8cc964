/**
 * A real WebSocket backend (the `ws` package on node:http, 127.0.0.1:0) that records every upgrade
 * request and close it sees, and a raw upgrade client for the answers a `ws` client hides.
 *
 * Backend behaviour by path: `/refuse` answers 403 JSON without upgrading; anything else upgrades
 * and echoes each message (text stays text, binary stays binary). A text message `close:<code>:<reason>`
 * makes the backend close with that code; `flood:<n>` makes it send n messages of 1 MiB at once.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';

export interface SeenUpgrade {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly remoteAddress: string | undefined;
}

export interface SeenClose {
  readonly code: number;
  readonly reason: string;
}

export interface WsBackend {
  readonly host: string;
  readonly port: number;
  readonly server: Server;
  readonly upgrades: SeenUpgrade[];
  readonly closes: SeenClose[];
  /** TCP connections accepted so far. */
  connections(): number;
  /** The backend side of each open WebSocket, in connection order. */
  readonly sockets: WebSocket[];
  /** Resolves with the next close the backend sees (bounded). */
  nextClose(ms?: number): Promise<SeenClose>;
  /** Resolves with the next WebSocket the backend accepts (bounded). */
  nextConnection(ms?: number): Promise<WebSocket>;
  close(): Promise<void>;
}

export async function startWsBackend(): Promise<WsBackend> {
  const upgrades: SeenUpgrade[] = [];
  const closes: SeenClose[] = [];
  const sockets: WebSocket[] = [];
  const closeWaiters: ((c: SeenClose) => void)[] = [];
  const connectionWaiters: ((ws: WebSocket) => void)[] = [];
  const tcp = new Set<Socket>();
  let accepted = 0;
  const server = createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"upgrade only"}');
  });
  server.on('connection', (s) => {
    accepted++;
    tcp.add(s);
    s.on('close', () => tcp.delete(s));
  });
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) => (protocols.has('chat') ? 'chat' : false),
  });
  server.on('upgrade', (req, socket: Duplex, head) => {
    upgrades.push({ url: req.url ?? '', headers: req.headers, remoteAddress: req.socket.remoteAddress });
    if (req.url?.startsWith('/refuse')) {
      const body = '{"error":"not allowed here","success":false}';
      socket.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\nx-backend: refused\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.push(ws);
      for (const w of connectionWaiters.splice(0)) w(ws);
      ws.on('message', (data: Buffer, isBinary) => {
        const text = isBinary ? '' : data.toString('utf8');
        if (text.startsWith('close:')) {
          const [, code, reason] = text.split(':');
          ws.close(Number(code), reason);
        } else if (text.startsWith('flood:')) {
          const chunk = Buffer.alloc(1024 * 1024, 7);
          for (let i = 0; i < Number(text.slice(6)); i++) ws.send(chunk);
        } else {
          ws.send(data, { binary: isBinary });
        }
      });
      ws.on('close', (code, reason) => {
        const c = { code, reason: reason.toString('utf8') };
        closes.push(c);
        for (const w of closeWaiters.splice(0)) w(c);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    host: `127.0.0.1:${port}`,
    port,
    server,
    upgrades,
    closes,
    sockets,
    connections: () => accepted,
    nextClose: (ms = 3_000) => bounded(new Promise<SeenClose>((r) => closeWaiters.push(r)), ms, 'backend close'),
    nextConnection: (ms = 3_000) =>
      bounded(new Promise<WebSocket>((r) => connectionWaiters.push(r)), ms, 'backend connection'),
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        for (const s of tcp) s.destroy();
        wss.close();
        server.close(() => resolve());
      }),
  };
}

/** Rejects when `p` has not settled within `ms`. */
export function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
    }),
  ]);
}

/** Opens a `ws` client and resolves once it is open, with the 101 response headers. */
export function openWebSocket(
  url: string,
  protocols?: string[],
  options: { headers?: Record<string, string> } = {},
): Promise<{ ws: WebSocket; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, { headers: options.headers });
    let headers: IncomingHttpHeaders = {};
    ws.once('upgrade', (res) => {
      headers = res.headers;
    });
    ws.once('open', () => resolve({ ws, headers }));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`unexpected response ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

export type UpgradeAnswer =
  | { kind: 'response'; status: number; headers: IncomingHttpHeaders; body: string; closed: Promise<void> }
  | { kind: 'upgrade'; status: number; headers: IncomingHttpHeaders; socket: Duplex };

/** Sends an upgrade request with exactly these headers and reports what came back. */
export function upgradeRequest(
  url: string,
  path: string,
  headers: Record<string, string>,
  method = 'GET',
): Promise<UpgradeAnswer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path, method, headers, agent: false });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      const closed = new Promise<void>((r) => res.socket.once('close', () => r()));
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          kind: 'response',
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          closed,
        }),
      );
      res.on('error', reject);
    });
    req.on('upgrade', (res, socket) =>
      resolve({ kind: 'upgrade', status: res.statusCode ?? 0, headers: res.headers, socket }),
    );
    req.on('error', reject);
    req.end();
  });
}

/** The headers of a valid WebSocket handshake. */
export function handshakeHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return {
    connection: 'Upgrade',
    upgrade: 'websocket',
    'sec-websocket-version': '13',
    'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    ...extra,
  };
}
