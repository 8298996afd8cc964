import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { compressResponse } from './compress-response.js';
import { compileCompression } from '../../layers/compression.js';
import { CompressionSchema } from '../../config/schema/compression.js';
import { GatewayResponse } from '../../server/gateway-response.js';

const policy = compileCompression(CompressionSchema.parse({ enabled: true, algorithms: ['gzip'] }));
const text = (n: number) => Buffer.from(JSON.stringify({ pad: 'abcdefghij'.repeat(n / 10) }));
const small = text(2_000);
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

describe('compressResponse, where it keeps the answer', () => {
  it("keeps a gateway response's compression in its own field, not in a WeakMap entry per request", async () => {
    // A WeakMap entry per request is an ephemeron: the scavenger keeps its value (the answer, and
    // the response it holds) alive, and the request's objects end up promoted (docs/compression.md).
    const server = createServer({ ServerResponse: GatewayResponse }, (_req, res) => {
      compressResponse(res, 'gzip', policy);
      const slot = (res as GatewayResponse).compressedAnswer;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ slot: slot !== undefined }));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/`);
      assert.deepEqual(await res.json(), { slot: true });
    } finally {
      await new Promise<void>((done) => server.close(() => done()));
    }
  });

  it('builds the head of a compressed answer without the removed fields, the given object untouched', async () => {
    const given = Object.freeze({
      'content-type': 'application/json',
      'content-length': String(small.length),
      'accept-ranges': 'bytes',
      etag: '"v1"',
      vary: 'Origin',
    });
    const server = createServer((_req, res) => {
      compressResponse(res, 'gzip', policy);
      res.writeHead(200, given);
      res.end(small);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const { port } = server.address() as AddressInfo;
      const { res, body } = await new Promise<{ res: IncomingMessage; body: Buffer }>((resolve, reject) => {
        request({ port, headers: { 'accept-encoding': 'gzip' } }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('end', () => resolve({ res, body: Buffer.concat(parts) }));
        })
          .on('error', reject)
          .end();
      });
      assert.equal(res.headers['content-encoding'], 'gzip');
      assert.equal(res.headers['content-length'], undefined);
      assert.equal(res.headers['accept-ranges'], undefined);
      assert.equal(res.headers.etag, 'W/"v1"');
      assert.equal(res.headers.vary, 'Origin, Accept-Encoding');
      assert.deepEqual(gunzipSync(body), small);
    } finally {
      await new Promise<void>((done) => server.close(() => done()));
    }
  });
});
