/**
 * The reference row of bench/compression.ts: what a user would write instead of a gateway that
 * compresses — the Node floor's proxy (bench/node-floor.ts: node:http in front of an undici Pool)
 * that pipes the backend's body through a node:zlib encoder when the client accepts the coding.
 * Only what the comparison needs: one coding and level, given on the command line, offered to
 * any client whose Accept-Encoding names it; Content-Length dropped, Content-Encoding and Vary set.
 * The encoder's settings are Portico's (src/response/compression/encoders.ts: Brotli in text mode).
 * `oneshot` as the last argument: the body is read whole and encoded in one synchronous call, as
 * Portico does with an answer of declared length up to 64 KiB, for a reference doing that same work.
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

function encoder(): zlib.Gzip | zlib.BrotliCompress {
  return coding === 'br' ? zlib.createBrotliCompress(brotli) : zlib.createGzip({ level });
}

function encodeWhole(body: Buffer): Buffer {
  return coding === 'br' ? zlib.brotliCompressSync(body, brotli) : zlib.gzipSync(body, { level });
}

const server = createServer({ keepAliveTimeout: 72_000 }, (req, res) => {
  const url = req.url ?? '/';
  if (!url.startsWith('/api/')) return void res.writeHead(404).end();
  const accepts = (req.headers['accept-encoding'] ?? '').includes(coding);
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && v !== undefined) headers[k] = v;
  pool.request(
    { path: url.slice(4), method: req.method as Dispatcher.HttpMethod, headers, body: null },
    (err, data) => {
      if (err !== null) return void res.writeHead(502).end();
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(data.headers)) if (!HOP.has(k) && v !== undefined) out[k] = v;
      if (!accepts) {
        res.writeHead(data.statusCode, out);
        return void pipeline(data.body, res, () => {});
      }
      delete out['content-length'];
      out['content-encoding'] = coding;
      out.vary = 'Accept-Encoding';
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
