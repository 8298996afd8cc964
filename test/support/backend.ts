/**
 * A real local backend on 127.0.0.1:0 that records what it received.
 * `startBackend(handler)` returns `{ url, origin, seen, close }`.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface SeenRequest {
  readonly method: string;
  /** Path and query exactly as the backend received them. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  readonly body: Buffer;
}

export type BackendHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => unknown;

export interface TestBackend {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** `127.0.0.1:PORT`, the form a `service:` takes. */
  readonly host: string;
  readonly port: number;
  readonly server: Server;
  readonly seen: SeenRequest[];
  close(): Promise<void>;
}

/** Answers 200 `{"ok":true}` unless given a handler. The body is read before the handler runs. */
export async function startBackend(
  handler: BackendHandler = defaultHandler,
  options: { bufferBody?: boolean } = {},
): Promise<TestBackend> {
  const seen: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    if (options.bufferBody === false) {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.alloc(0),
      });
      void handler(req, res, Buffer.alloc(0));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body,
      });
      void handler(req, res, body);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    port,
    server,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

const defaultHandler: BackendHandler = (_req, res) => json(res, 200, { ok: true });

/** A port on which nothing listens (bound, then released), for "connection refused" tests. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A request sent with node:http, whose path is written to the socket exactly as given
 * (undici and fetch normalise `%2E%2E` and `..` before sending, hiding what a raw client can do).
 */
export function rawRequest(
  url: string,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: u.hostname, port: u.port, path, method: options.method ?? 'GET', headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
