/**
 * The reference row of bench/compression.ts: what a user would write instead of a gateway that
 * compresses — the Node floor's proxy (bench/node-floor.ts: node:http in front of an undici Pool)
 * that pipes the backend's body through a node:zlib encoder when the client accepts the coding.
 * It has the duties Portico has on this answer, as a user writing it would meet them: one coding
 * and level, given on the command line, chosen by the client's `Accept-Encoding` with its q-values
 * (`gzip;q=0` refuses, `*` accepts what is not listed), only for a 2xx/3xx answer of a
 * compressible type that is not encoded already; `Vary: Accept-Encoding` on every answer,
 * compressed or not; Content-Length dropped, Content-Encoding set.
 * The encoder's settings are Portico's (src/response/compression/encoders.ts: the same level,
 * Brotli in text mode, node:zlib's defaults for the rest), so both send the same bytes
 * (bench/compression.ts prints the bytes on the wire of every row).
 * `oneshot` as the last argument: the body is read whole and encoded in one synchronous call
 * (`zlib.gzipSync` / `zlib.brotliCompressSync`), as Portico does with an answer of declared length
 * up to 64 KiB: the reference doing that same work. Synchronous because that is what a user who
 * has the body whole writes, and what Portico runs: the callback form (`zlib.gzip(buf, cb)`) does
 * the same coding on libuv's thread pool, which with the proxy pinned to one core only adds two
 * thread hand-offs per answer.
 * Run: `node node-compress-proxy.js BACKEND_URL PORT gzip|br LEVEL [oneshot]`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream';
import zlib from 'node:zlib';
import { Pool, type Dispatcher } from 'undici';

const [backend = 'http://127.0.0.1:3000', port = '0', coding = 'gzip', levelText = '5', mode = 'stream'] =
  process.argv.slice(2);
const level = Number(levelText);
const brotli = {
  params: {
    [zlib.constants.BROTLI_PARAM_QUALITY]: level,
    [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
  },
};
const pool = new Pool(backend, { connections: 64, pipelining: 1 });
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);

const COMPRESSIBLE = /^\s*(application\/(json|javascript|xml|[^;]*\+(json|xml))|text\/|image\/svg\+xml)/i;

/** True when the client's Accept-Encoding accepts `coding` (RFC 9110 12.5.3: q > 0, or `*` with q > 0). */
function accepts(header: string | undefined): boolean {
  if (header === undefined) return false;
  let star = 0;
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';');
    const q = params.reduce((w, p) => (p.trim().startsWith('q=') ? Number(p.trim().slice(2)) || 0 : w), 1);
    const token = name.trim().toLowerCase();
    if (token === coding) return q > 0;
    if (token === '*') star = q;
  }
  return star > 0;
}

function encoder(): zlib.Gzip | zlib.BrotliCompress {
  return coding === 'br' ? zlib.createBrotliCompress(brotli) : zlib.createGzip({ level });
}

function encodeWhole(body: Buffer): Buffer {
  return coding === 'br' ? zlib.brotliCompressSync(body, brotli) : zlib.gzipSync(body, { level });
}

const server = createServer({ keepAliveTimeout: 72_000 }, (req, res) => {
  const url = req.url ?? '/';
  if (!url.startsWith('/api/')) return void res.writeHead(404).end();
  const wanted = accepts(req.headers['accept-encoding']);
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && v !== undefined) headers[k] = v;
  pool.request(
    { path: url.slice(4), method: req.method as Dispatcher.HttpMethod, headers, body: null },
    (err, data) => {
      if (err !== null) return void res.writeHead(502).end();
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(data.headers)) if (!HOP.has(k) && v !== undefined) out[k] = v;
      const vary = out.vary;
      out.vary = vary === undefined ? 'Accept-Encoding' : `${String(vary)}, Accept-Encoding`;
      const type = out['content-type'];
      const compress =
        wanted &&
        data.statusCode >= 200 &&
        data.statusCode < 400 &&
        data.statusCode !== 204 &&
        data.statusCode !== 206 &&
        data.statusCode !== 304 &&
        out['content-encoding'] === undefined &&
        typeof type === 'string' &&
        COMPRESSIBLE.test(type);
      if (!compress) {
        res.writeHead(data.statusCode, out);
        return void pipeline(data.body, res, () => {});
      }
      delete out['content-length'];
      out['content-encoding'] = coding;
      if (mode !== 'oneshot') {
        res.writeHead(data.statusCode, out);
        return void pipeline(data.body, encoder(), res, () => {});
      }
      const parts: Buffer[] = [];
      data.body.on('data', (c: Buffer) => parts.push(c));
      data.body.on('error', () => res.destroy());
      data.body.on('end', () => {
        res.writeHead(data.statusCode, out);
        res.end(encodeWhole(Buffer.concat(parts)));
      });
    },
  );
});

server.listen(Number(port), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port }) + '\n');
});
process.on('SIGTERM', () => process.exit(0));
