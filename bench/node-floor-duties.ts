/**
 * The Node floor (bench/node-floor.ts) doing the per-request duties Portico does by default, each
 * in the plainest form Node offers, so that Portico's ratio to it shows what Portico's own
 * structure costs once both pay for the same output:
 * - `X-Request-ID`: the client's when it is short printable ASCII, else `randomUUID()`; on the
 *   response and to the backend;
 * - `X-Forwarded-For`, `X-Forwarded-Proto`, `X-Forwarded-Host` to the backend;
 * - W3C `traceparent` to the backend: the client's trace continued, or a new one, with a new span
 *   id; ids from a pooled random buffer;
 * - one access line per request in pino's format (level, time, request id, method, path,
 *   status, duration), collected in a string and written to stdout per 64 KiB or 100 ms.
 * Nothing else: no routing table, no pipeline, no limits, no circuit, no metrics, and no bound on
 * what stdout holds (the thinnest code, not a safe one).
 * With `--tls CERT KEY` it listens with TLS, speaking h2 and HTTP/1.1 as bench/node-floor.ts does
 * (node:http2's secure server with allowHTTP1, h2 through its compatibility API), and answers the
 * harness's `GET /health` on the plain port given by `--health PORT`.
 * Run: `node node-floor-duties.js BACKEND_URL PORT [--tls CERT KEY --health PORT]`; without TLS it
 * answers `GET /health` on PORT.
 */
import { createServer } from 'node:http';
import { createSecureServer } from 'node:http2';
import { readFileSync } from 'node:fs';
import { randomFillSync, randomUUID } from 'node:crypto';
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
// Set by the proxy itself on the way to the backend.
const OWNED = new Set([
  ...HOP,
  'x-request-id',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'traceparent',
]);
const pool = new Pool(process.argv[2] ?? 'http://127.0.0.1:3000', { connections: 64, pipelining: 1 });

function without(drop: Set<string>, headers: Record<string, string | string[] | undefined>) {
  const out: Record<string, string | string[]> = {};
  // HTTP/2 pseudo-headers (`:path`...) start with a colon: never forwarded either.
  for (const name in headers)
    if (!drop.has(name) && name.charCodeAt(0) !== 58 && headers[name] !== undefined) out[name] = headers[name];
  return out;
}

const POOL = Buffer.allocUnsafe(4096);
let offset = POOL.length;
function hex(bytes: number): string {
  if (offset + bytes > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  offset += bytes;
  return POOL.toString('hex', offset - bytes, offset);
}

const TRACEPARENT = /^00-([0-9a-f]{32})-[0-9a-f]{16}-([0-9a-f]{2})$/;
const ID = /^[\x21-\x7e]{1,128}$/;

let pending = '';
let timer: NodeJS.Timeout | undefined;
function flush(): void {
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  if (pending !== '') process.stdout.write(pending);
  pending = '';
}
function log(line: string): void {
  pending += line;
  if (pending.length >= 65_536) flush();
  else timer ??= setTimeout(flush, 100);
}

const tls = process.argv.indexOf('--tls');
const proto = tls < 0 ? 'http' : 'https';

const handler: Parameters<typeof createServer>[1] = (req, res) => {
  const started = performance.now();
  const url = req.url ?? '/';
  if (url === '/health') return void res.writeHead(200).end();
  if (!url.startsWith('/api/')) return void res.writeHead(404).end();
  const h = req.headers;
  const clientId = h['x-request-id'];
  const id = typeof clientId === 'string' && ID.test(clientId) ? clientId : randomUUID();
  const parent = typeof h.traceparent === 'string' ? TRACEPARENT.exec(h.traceparent) : null;
  const headers = without(OWNED, h);
  headers['x-forwarded-for'] = req.socket.remoteAddress ?? '';
  headers['x-forwarded-proto'] = proto;
  const host = h.host ?? h[':authority'];
  if (typeof host === 'string') headers['x-forwarded-host'] = host;
  headers['x-request-id'] = id;
  headers.traceparent = `00-${parent?.[1] ?? hex(16)}-${hex(8)}-${parent?.[2] ?? '01'}`;
  res.once('close', () =>
    log(
      `{"level":30,"time":${Date.now()},"reqId":${JSON.stringify(id)},"method":"${req.method}","path":${JSON.stringify(
        url,
      )},"status":${res.statusCode},"durationMs":${Math.round((performance.now() - started) * 100) / 100},"msg":"request"}\n`,
    ),
  );
  pool.stream(
    {
      path: url.slice(4),
      method: req.method as Dispatcher.HttpMethod,
      headers,
      body: h['content-length'] !== undefined || h['transfer-encoding'] !== undefined ? req : null,
    },
    ({ statusCode, headers: answer }) => {
      const out = without(HOP, answer);
      out['x-request-id'] = id;
      res.writeHead(statusCode, out);
      return res;
    },
    (err) => {
      if (err === null) return;
      if (res.headersSent) res.destroy();
      else res.writeHead(502).end();
    },
  );
};

const server =
  tls < 0
    ? createServer({ keepAliveTimeout: 72_000 }, handler)
    : createSecureServer(
        { allowHTTP1: true, cert: readFileSync(process.argv[tls + 1]!), key: readFileSync(process.argv[tls + 2]!) },
        handler as unknown as Parameters<typeof createSecureServer>[1],
      );
server.listen(Number(process.argv[3]), '127.0.0.1');
const health = process.argv.indexOf('--health');
if (health > 0)
  createServer((_req, res) => void res.writeHead(200).end()).listen(Number(process.argv[health + 1]), '127.0.0.1');
process.on('SIGTERM', () => {
  flush();
  process.exit(0);
});
