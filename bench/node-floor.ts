/**
 * The Node floor: the thinnest correct proxy plain Node offers, node:http in front of
 * an undici Pool whose stream() writes the backend body straight into the client response (the
 * same proxy with pool.request() + pipeline() runs at about half the speed). Portico's goals are
 * ratios to it. It strips the `/api` prefix like Portico's basePath, drops hop-by-hop headers, and
 * does nothing else per request: no AbortController, no listener of its own.
 *
 * A client that leaves still releases the upstream socket: Pool.stream() watches the Writable its
 * factory returns with `finished(res, { readable: false })` and, when that ends in an error (a
 * ServerResponse closed before it finished is a premature close), destroys it and calls the
 * dispatch's `abort()`, which ends the backend call (undici lib/api/api-stream.js, StreamHandler
 * onHeaders). A client that leaves before the backend's headers arrive is noticed when they do:
 * the factory then hands back an already closed response and the same path runs.
 * With `--tls CERT KEY` it listens with TLS, speaking h2 and HTTP/1.1 (node:http2's secure server
 * with allowHTTP1, h2 requests through its compatibility API): the floor of docs/tls.md's goals.
 * `--h2-core` (with `--tls`) serves h2 only, through node:http2's core API (`stream.respond`, no
 * compatibility objects): what HTTP/2 costs Node without the layer that gives it the
 * IncomingMessage/ServerResponse shape.
 * `--ws URL` (plain HTTP/1.1 only) also relays WebSocket handshakes under `/api/` to that
 * backend, the thinnest tunnel plain Node offers: the request head rewritten onto a new
 * `net` connection, then the two sockets piped both ways, the backend's 101 included, with no
 * parsing of either side (bench/connections.ts: memory per open tunnel).
 * Run: `node node-floor.js BACKEND_URL [port] [--tls CERT KEY [--h2-core]] [--ws WS_BACKEND_URL]`.
 */
import { createServer } from 'node:http';
import { createSecureServer, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import { readFileSync } from 'node:fs';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { Pool, type Dispatcher } from 'undici';

const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
]);
const pool = new Pool(process.argv[2] ?? 'http://127.0.0.1:3000', { connections: 64, pipelining: 1 });

function withoutHop(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  // HTTP/2 pseudo-headers (`:path`...) start with a colon: never forwarded either.
  for (const name in headers)
    if (!HOP.has(name) && name.charCodeAt(0) !== 58 && headers[name] !== undefined) out[name] = headers[name];
  return out;
}

const handler: Parameters<typeof createServer>[1] = (req, res) => {
  const url = req.url ?? '/';
  if (!url.startsWith('/api/')) return void res.writeHead(404).end();
  const h = req.headers;
  pool.stream(
    {
      path: url.slice(4),
      method: req.method as Dispatcher.HttpMethod,
      headers: withoutHop(h),
      body: h['content-length'] !== undefined || h['transfer-encoding'] !== undefined ? req : null,
    },
    ({ statusCode, headers }) => {
      res.writeHead(statusCode, withoutHop(headers));
      return res;
    },
    (err) => {
      if (err === null) return;
      if (res.headersSent) res.destroy();
      else res.writeHead(502).end();
    },
  );
};

const tls = process.argv.indexOf('--tls');
const tlsOptions = () => ({ cert: readFileSync(process.argv[tls + 1]!), key: readFileSync(process.argv[tls + 2]!) });
const server =
  tls < 0
    ? createServer({ keepAliveTimeout: 72_000 }, handler)
    : process.argv.includes('--h2-core')
      ? createSecureServer(tlsOptions()).on('stream', (stream: ServerHttp2Stream, h: IncomingHttpHeaders) => {
          const path = h[':path'] ?? '/';
          if (!path.startsWith('/api/')) return void stream.respond({ ':status': 404 }, { endStream: true });
          pool.stream(
            { path: path.slice(4), method: h[':method'] as Dispatcher.HttpMethod, headers: withoutHop(h), body: null },
            ({ statusCode, headers }) => {
              stream.respond({ ...withoutHop(headers), ':status': statusCode });
              return stream;
            },
            (err) => {
              if (err === null || stream.destroyed) return;
              if (stream.headersSent) stream.close();
              else stream.respond({ ':status': 502 }, { endStream: true });
            },
          );
        })
      : createSecureServer(
          { allowHTTP1: true, ...tlsOptions() },
          handler as unknown as Parameters<typeof createSecureServer>[1],
        );

const ws = process.argv.indexOf('--ws');
if (ws > 0 && tls < 0) {
  const target = new URL(process.argv[ws + 1]!);
  server.on('upgrade', (req, client: Socket, head: Buffer) => {
    const url = req.url ?? '/';
    if (!url.startsWith('/api/')) return void client.destroy();
    let text = `${req.method} ${url.slice(4)} HTTP/1.1\r\n`;
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) text += `${raw[i]}: ${raw[i + 1]}\r\n`;
    const backend = connect(Number(target.port), target.hostname);
    backend.write(text + '\r\n');
    if (head.length > 0) backend.write(head);
    client.setNoDelay(true);
    backend.setNoDelay(true);
    const both = () => {
      client.destroy();
      backend.destroy();
    };
    client.on('error', both).on('close', both);
    backend.on('error', both).on('close', both);
    client.pipe(backend).pipe(client);
  });
}

server.listen(Number(process.argv[3] ?? 0), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port }) + '\n');
});
process.on('SIGTERM', () => process.exit(0));
