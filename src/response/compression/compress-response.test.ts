import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { compressResponse } from './compress-response.js';
import { compileCompression } from '../../layers/compression.js';
import { CompressionSchema } from '../../config/schema/compression.js';

const policy = compileCompression(CompressionSchema.parse({ enabled: true, algorithms: ['gzip'] }));
const text = (n: number) => Buffer.from(JSON.stringify({ pad: 'abcdefghij'.repeat(n / 10) }));
/** What each test's writer saw of the callbacks and return values of `write`. */
const seen: { writes: boolean[]; callbacks: number } = { writes: [], callbacks: 0 };

/** Writes `body` in `chunks` pieces with a declared length, as the forward endpoint does. */
function writeInChunks(res: ServerResponse, body: Buffer, chunks: number): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  const size = Math.ceil(body.length / chunks);
  for (let at = 0; at < body.length; at += size)
    seen.writes.push(res.write(body.subarray(at, at + size), () => seen.callbacks++));
  res.end();
}

describe('compressResponse, answers of declared length', () => {
  const small = text(30_000);
  const large = text(200_000);
  let server: Server;
  let port = 0;

  before(async () => {
    server = createServer((req, res) => {
      compressResponse(res, 'gzip', policy);
      writeInChunks(res, req.url === '/large' ? large : small, 7);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((done) => server.close(() => done())));

  const get = (path: string) =>
    new Promise<{ res: IncomingMessage; body: Buffer }>((resolve, reject) => {
      request({ port, path, headers: { 'accept-encoding': 'gzip' } }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => resolve({ res, body: Buffer.concat(parts) }));
      })
        .on('error', reject)
        .end();
    });

  it('encodes a short answer written in many chunks in one piece, and calls back every write', async () => {
    seen.writes = [];
    seen.callbacks = 0;
    const { res, body } = await get('/small');
    assert.equal(res.headers['content-encoding'], 'gzip');
    assert.equal(res.headers['content-length'], undefined);
    assert.deepEqual(gunzipSync(body), small);
    // Held, not streamed: no write asks the writer to wait, and one gzip member holds it all.
    assert.deepEqual(seen.writes, new Array(7).fill(true));
    assert.equal(seen.callbacks, 7);
    assert.equal(body.indexOf(Buffer.from([0x1f, 0x8b]), 2), -1);
  });

  it('streams an answer larger than the one-shot bound, with backpressure', async () => {
    seen.writes = [];
    const { res, body } = await get('/large');
    assert.equal(res.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(body), large);
    assert.ok(seen.writes.includes(false), 'a large chunk fills the encoder and the writer is asked to wait');
  });
});
