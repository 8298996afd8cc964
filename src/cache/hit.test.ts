import { describe, it, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayResponse, stampRequestId } from '../server/gateway-response.js';
import { responseTimes } from './freshness.js';
import { sendStored } from './hit.js';
import type { CacheEntry } from './store.js';

const LM = 'Mon, 02 Nov 2026 10:00:00 GMT';
const headers = {
  'content-type': 'application/json',
  'cache-control': 'max-age=60',
  etag: '"v1"',
  'last-modified': LM,
  link: ['</a>; rel=preload', '</b>; rel=preload'],
};
const entry: CacheEntry = {
  status: 200,
  headers,
  body: Buffer.from('{"ok":true}'),
  times: responseTimes(headers, 0, 0),
  lifetimeSec: 60,
  staleIfErrorSec: 0,
};

/** A real server with the gateway's response class, answering every request with `entry`. */
describe('sendStored: a hit written from a stored entry', () => {
  let server: Server;
  let port = 0;
  /** setHeader calls of the last answer: none means Node wrote the head in one pass. */
  let setHeaderCalls: string[] = [];

  before(async () => {
    server = createServer({ ServerResponse: GatewayResponse }, (req, res: ServerResponse) => {
      stampRequestId(res, 'req-7');
      setHeaderCalls = [];
      const setHeader = res.setHeader.bind(res);
      res.setHeader = (name, value) => (setHeaderCalls.push(name), setHeader(name, value));
      sendStored({ req, res, requestId: 'req-7' }, entry, 12.7, 'Portico; hit', req.headers['x-plain'] !== 'no');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function get(
    extra: Record<string, string> = {},
    method = 'GET',
  ): Promise<{ status: number; headers: IncomingHttpHeaders; raw: string[]; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request({ port, host: '127.0.0.1', method, path: '/x', headers: extra }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, raw: res.rawHeaders, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('sends the stored fields, length, Age, Cache-Status and the request id, with no setHeader', async () => {
    const r = await get();
    assert.equal(r.status, 200);
    assert.equal(r.body, '{"ok":true}');
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.headers['content-length'], '11');
    assert.equal(r.headers.age, '12');
    assert.equal(r.headers['cache-status'], 'Portico; hit');
    assert.equal(r.headers['x-request-id'], 'req-7');
    assert.equal(r.headers.etag, '"v1"');
    assert.deepEqual(setHeaderCalls, []);
  });

  it('sends a field stored with several values as several lines', async () => {
    const r = await get();
    const links = r.raw.filter((_, i) => i % 2 === 1 && r.raw[i - 1]!.toLowerCase() === 'link');
    assert.deepEqual(links, ['</a>; rel=preload', '</b>; rel=preload']);
  });

  it('answers HEAD with the head alone', async () => {
    const r = await get({}, 'HEAD');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-length'], '11');
    assert.equal(r.body, '');
  });

  it("answers 304 to the client's matching If-None-Match, with the id", async () => {
    const r = await get({ 'if-none-match': 'W/"v1"' });
    assert.equal(r.status, 304);
    assert.equal(r.headers.etag, '"v1"');
    assert.equal(r.headers['x-request-id'], 'req-7');
    assert.equal(r.headers['cache-status'], 'Portico; hit');
  });

  it('answers a Range with a 206 of the part', async () => {
    const r = await get({ range: 'bytes=0-4' });
    assert.equal(r.status, 206);
    assert.equal(r.body, '{"ok"');
    assert.equal(r.headers['content-range'], 'bytes 0-4/11');
    assert.equal(r.headers['x-request-id'], 'req-7');
  });

  it('writes a headers object for a route whose writer needs one, with the same fields', async () => {
    const r = await get({ 'x-plain': 'no' });
    assert.equal(r.status, 200);
    assert.equal(r.body, '{"ok":true}');
    assert.equal(r.headers.age, '12');
    assert.equal(r.headers['content-length'], '11');
    assert.equal(r.headers['x-request-id'], 'req-7');
    assert.deepEqual(setHeaderCalls, []);
  });
});
