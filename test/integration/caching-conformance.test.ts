/**
 * What the public HTTP cache test suite (http-tests/cache-tests, `npm run test:cache-conformance`,
 * docs/caching.md "Conformance") found, each case end to end over HTTP/1.1 and HTTP/2: the Age an
 * answer arrives with, Expires dates HTTP does not allow, CDN-Cache-Control, answers the backend
 * encoded itself, a Range served from the store, Vary values that differ only in whitespace or
 * case, must-understand, If-Modified-Since without Last-Modified.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type ClientHttp2Session } from 'node:http2';
import { gzipSync, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';

interface Answer {
  readonly status: number;
  readonly h: (name: string) => string | undefined;
  readonly body: Buffer;
}

const single = (v: string | string[] | number | undefined) => (Array.isArray(v) ? v.join(', ') : v?.toString());

async function h1(url: string, headers: Record<string, string>): Promise<Answer> {
  const res = await request(url, { headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, h: (n) => single(res.headers[n]), body };
}

function h2(session: ClientHttp2Session, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, ...headers });
    const chunks: Buffer[] = [];
    let head: Record<string, string | string[] | number | undefined> = {};
    stream.on('response', (h) => (head = h));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () =>
      resolve({ status: Number(head[':status']), h: (n) => single(head[n]), body: Buffer.concat(chunks) }),
    );
    stream.on('error', reject);
  });
}

/** A Date a few seconds old, so that an answer dated so is fresh. */
const DATED = new Date(Date.now() - 5_000).toUTCString();

describe('the shared HTTP cache against the findings of the public cache test suite', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let session: ClientHttp2Session;
  /** Backend calls per path and query. */
  const calls = new Map<string, number>();
  const count = (url: string) => calls.get(url) ?? 0;

  before(async () => {
    backend = await startBackend((req, res) => {
      const url = req.url ?? '';
      calls.set(url, count(url) + 1);
      const path = url.split('?')[0]!;
      const send = (headers: Record<string, string | string[]>, body: string | Buffer = `${path} ${count(url)}`) => {
        res.writeHead(200, { 'content-type': 'text/plain', date: new Date().toUTCString(), ...headers });
        res.end(body);
      };
      switch (path) {
        case '/aged':
          return send({ 'cache-control': 'max-age=3600', age: ['7200', '0'] });
        case '/aged-fresh':
          return send({ 'cache-control': 'max-age=3600', age: '30' });
        case '/expires-utc':
          return send({ expires: 'Thu, 18 Aug 2050 02:01:18 UTC' });
        case '/cdn':
          return send({ 'cache-control': 'no-store', 'cdn-cache-control': 'max-age=600' });
        case '/cdn-private':
          return send({ 'cache-control': 'max-age=600', 'cdn-cache-control': 'private' });
        case '/encoded':
          return send(
            { 'cache-control': 'max-age=600', 'content-encoding': 'gzip' },
            gzipSync(`${path} ${count(url)}`),
          );
        case '/range':
          return send({ 'cache-control': 'max-age=600', etag: '"r1"' }, '01234567890');
        case '/lang':
          return send({ 'cache-control': 'max-age=600', vary: 'Accept-Language' });
        case '/must-understand':
          return send({ 'cache-control': 'max-age=3600, no-store, must-understand' });
        case '/dated':
          return send({ 'cache-control': 'max-age=600', date: DATED });
        default:
          res.writeHead(404).end();
      }
    });
    gw = await startGateway(`
config:
  http2: { cleartext: true }
routes:
  - { method: GET, route: /*, service: ${backend.host}, path: /*, cache: true }
`);
    session = connect(gw.url);
  });
  after(async () => {
    session.close();
    await closeAll(gw, backend);
  });

  for (const protocol of ['HTTP/2', 'HTTP/1.1'] as const) {
    const p = protocol === 'HTTP/1.1' ? 'h1' : 'h2';
    /** GET `path` (with this protocol's query, so each protocol has its own entries). */
    const get = (path: string, headers: Record<string, string> = {}) => {
      const target = `/api${path}?p=${p}`;
      return protocol === 'HTTP/1.1' ? h1(`${gw.url}${target}`, headers) : h2(session, target, headers);
    };
    const calledFor = (path: string) => count(`${path}?p=${p}`);

    describe(protocol, () => {
      it('counts the Age an answer arrives with: stale on arrival is not served, the rest is older', async () => {
        await get('/aged');
        const again = await get('/aged');
        assert.equal(calledFor('/aged'), 2, 'Age 7200 (the first of two lines) > max-age 3600');
        assert.notEqual(again.h('cache-status'), 'Portico; hit');
        await get('/aged-fresh');
        const hit = await get('/aged-fresh');
        assert.equal(hit.h('cache-status'), 'Portico; hit');
        assert.ok(Number(hit.h('age')) >= 30, `Age ${hit.h('age')} counts the 30 received`);
      });

      it('takes an Expires that is not an HTTP-date as expired', async () => {
        await get('/expires-utc');
        await get('/expires-utc');
        assert.equal(calledFor('/expires-utc'), 2);
      });

      it('obeys CDN-Cache-Control over Cache-Control', async () => {
        await get('/cdn');
        const hit = await get('/cdn');
        assert.equal(calledFor('/cdn'), 1, 'CDN-Cache-Control: max-age=600 beats Cache-Control: no-store');
        assert.equal(hit.h('cache-status'), 'Portico; hit');
        await get('/cdn-private');
        await get('/cdn-private');
        assert.equal(calledFor('/cdn-private'), 2, 'CDN-Cache-Control: private beats max-age');
      });

      it('stores an answer the backend encoded itself, on a route that does not compress', async () => {
        const first = await get('/encoded');
        const hit = await get('/encoded');
        assert.equal(calledFor('/encoded'), 1);
        assert.equal(hit.h('content-encoding'), 'gzip');
        assert.deepEqual(hit.body, first.body);
        assert.equal(gunzipSync(hit.body).toString(), '/encoded 1');
      });

      it('answers a Range from the stored answer with a 206, and a stale If-Range with the whole', async () => {
        await get('/range');
        const part = await get('/range', { range: 'bytes=0-1' });
        assert.equal(part.status, 206);
        assert.equal(part.body.toString(), '01');
        assert.equal(part.h('content-range'), 'bytes 0-1/11');
        assert.equal(part.h('content-length'), '2');
        const suffix = await get('/range', { range: 'bytes=-3', 'if-range': '"r1"' });
        assert.equal(suffix.body.toString(), '890');
        const whole = await get('/range', { range: 'bytes=0-1', 'if-range': '"other"' });
        assert.equal(whole.status, 200);
        assert.equal(whole.body.toString(), '01234567890');
        assert.equal(calledFor('/range'), 1);
      });

      it('keys Vary by values normalised for whitespace and language case', async () => {
        await get('/lang', { 'accept-language': 'en, de' });
        const hit = await get('/lang', { 'accept-language': 'eN ,De' });
        assert.equal(hit.h('cache-status'), 'Portico; hit');
        await get('/lang', { 'accept-language': 'de, en' });
        assert.equal(calledFor('/lang'), 2, 'another order is another variant');
      });

      it('stores a no-store, must-understand answer of a status it knows', async () => {
        await get('/must-understand');
        await get('/must-understand');
        assert.equal(calledFor('/must-understand'), 1);
      });

      it('answers If-Modified-Since against the stored Date when there is no Last-Modified', async () => {
        await get('/dated');
        const same = await get('/dated', { 'if-modified-since': DATED });
        assert.equal(same.status, 304);
        const older = await get('/dated', {
          'if-modified-since': new Date(Date.parse(DATED) - 86_400_000).toUTCString(),
        });
        assert.equal(older.status, 200);
        assert.equal(calledFor('/dated'), 1);
      });
    });
  }
});
