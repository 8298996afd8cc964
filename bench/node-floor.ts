/**
 * The Node floor of issue #8: the fastest proxy plain Node offers, node:http in front of an undici
 * Pool whose stream() writes the backend body straight into the client response (the same proxy
 * with pool.request() + pipeline() runs at about half the speed). Portico's goals are ratios to it.
 * It strips the `/api` prefix like Portico's basePath, drops hop-by-hop headers and releases the
 * upstream socket when the client leaves. Run: `node node-floor.js BACKEND_URL [port]`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool, type Dispatcher } from 'undici';

const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);
const pool = new Pool(process.argv[2] ?? 'http://127.0.0.1:3000', { connections: 64, pipelining: 1 });

function withoutHop(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) if (!HOP.has(name) && headers[name] !== undefined) out[name] = headers[name];
  return out;
}

const server = createServer({ keepAliveTimeout: 72_000 }, (req, res) => {
  const url = req.url ?? '/';
  if (!url.startsWith('/api/')) return void res.writeHead(404).end();
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const h = req.headers;
  pool.stream(
    {
      path: url.slice(4),
      method: req.method as Dispatcher.HttpMethod,
      headers: withoutHop(h),
      body: h['content-length'] !== undefined || h['transfer-encoding'] !== undefined ? req : null,
      signal: abort.signal,
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
});

server.listen(Number(process.argv[3] ?? 0), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port }) + '\n');
});
process.on('SIGTERM', () => process.exit(0));
