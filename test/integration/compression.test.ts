/**
 * Response compression end to end (docs/compression.md): a real gateway in front of a real
 * backend, read by undici (raw bytes, decoded here), node:http2 (h2c), curl --compressed and
 * Chromium. What is compressed and what never is; Vary, weak ETags, no Content-Length; a streamed
 * answer's chunks are not held back; mapped, aggregated and filtered routes compress what they
 * build; a route with compression: false and an SSE route send what the backend sent.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync } from 'node:fs';
import { brotliDecompressSync, createGunzip, gunzipSync, gzipSync } from 'node:zlib';
import { connect } from 'node:http2';
import { request } from 'undici';
import { chromium } from 'playwright-core';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { loadConfigText } from '../../src/config/load.js';
import { formatProblem } from '../../src/config/problems.js';

const run = promisify(execFile);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** A JSON answer of about 20 KB, like the benchmark's. */
const ITEMS = Array.from({ length: 160 }, (_, i) => ({
  id: i,
  name: `item ${i}`,
  description: 'A moderately long description that repeats, as real API answers do.',
  tags: ['alpha', 'beta', 'gamma'],
  userId: `u${i % 7}`,
}));
const BIG = JSON.stringify(ITEMS);

function decode(encoding: string | undefined, body: Buffer): string {
  if (encoding === 'gzip') return gunzipSync(body).toString();
  if (encoding === 'br') return brotliDecompressSync(body).toString();
  if (encoding === undefined) return body.toString();
  throw new Error(`unexpected content-encoding ${encoding}`);
}

async function fetchRaw(url: string, headers: Record<string, string> = {}, method = 'GET') {
  const res = await request(url, { method, headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  const h = (name: string) => {
    const v = res.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  };
  return { status: res.statusCode, h, body };
}

describe('response compression', () => {
  let backend: TestBackend;
  let users: TestBackend;
  let gw: TestGateway;
  /** Resolved by the test once it read the first line of the stream. */
  let firstLineRead: () => void = () => {};

  before(async () => {
    backend = await startBackend((req, res) => {
      const url = req.url ?? '';
      if (url === '/big') return json(res, 200, ITEMS, { etag: '"v1"', 'accept-ranges': 'bytes' });
      if (url === '/small') return json(res, 200, { ok: true });
      if (url === '/vary') return json(res, 200, ITEMS, { vary: 'Origin' });
      if (url === '/no-transform') return json(res, 200, ITEMS, { 'cache-control': 'public, no-transform' });
      if (url === '/png') {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': BIG.length });
        return res.end(BIG);
      }
      if (url === '/encoded') {
        const gz = gzipSync(BIG);
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'content-length': gz.length,
        });
        return res.end(gz);
      }
      if (url === '/not-modified') {
        res.writeHead(304, { etag: '"v1"' });
        return res.end();
      }
      if (url === '/partial') {
        res.writeHead(206, {
          'content-type': 'application/json',
          'content-range': `bytes 0-1999/${BIG.length}`,
          'content-length': 2000,
        });
        return res.end(BIG.slice(0, 2000));
      }
      if (url === '/lines') {
        // A stream of JSON lines: the second line waits until the client has read the first.
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        res.write(`${JSON.stringify({ line: 1, pad: 'x'.repeat(2000) })}\n`);
        const second = new Promise<void>((resolve) => (firstLineRead = resolve));
        void second.then(() => res.end(`${JSON.stringify({ line: 2 })}\n`));
        return;
      }
      if (url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return res.end(`data: ${'e'.repeat(3000)}\n\n`);
      }
      if (url.startsWith('/orders')) return json(res, 200, ITEMS.slice(0, 60));
      if (url.startsWith('/profile')) return json(res, 200, { name: 'Ada', bio: 'b'.repeat(3000), secret: 's' });
      return json(res, 404, { error: 'nope' });
    });
    users = await startBackend((req, res) =>
      json(res, 200, { id: req.url?.slice(7), name: 'User name that is long enough' }),
    );
    gw = await startGateway(`
config:
  http2:
    cleartext: true
  compression:
    enabled: true
    algorithms: [br, gzip]
routes:
  - { method: GET, route: /big, service: ${backend.host}, path: /big }
  - { method: GET, route: /small, service: ${backend.host}, path: /small }
  - { method: GET, route: /vary, service: ${backend.host}, path: /vary }
  - { method: GET, route: /no-transform, service: ${backend.host}, path: /no-transform }
  - { method: GET, route: /png, service: ${backend.host}, path: /png }
  - { method: GET, route: /encoded, service: ${backend.host}, path: /encoded }
  - { method: GET, route: /not-modified, service: ${backend.host}, path: /not-modified }
  - { method: GET, route: /partial, service: ${backend.host}, path: /partial }
  - { method: GET, route: /lines, service: ${backend.host}, path: /lines }
  - { method: GET, route: /events, service: ${backend.host}, path: /events, isSSE: true }
  - { method: GET, route: /plain, service: ${backend.host}, path: /big, compression: false }
  - method: GET
    route: /orders
    service: ${backend.host}
    path: /orders
    mapping:
      - { tag: userId, service: ${users.host}, path: "/users/{userId}" }
  - method: GET
    route: /profile
    service: ${backend.host}
    path: /profile
    response:
      deny: [secret]
  - method: GET
    route: /both
    backends:
      - { service: ${backend.host}, path: /orders, group: orders }
      - { service: ${backend.host}, path: /profile, group: profile }
`);
  });
  after(() => closeAll(gw, backend, users));

  it('compresses a JSON answer with the coding the client prefers, and the body decodes to what the backend sent', async () => {
    for (const [accept, coding] of [
      ['gzip, deflate, br', 'br'],
      ['gzip', 'gzip'],
      ['br;q=0.5, gzip', 'gzip'],
    ] as const) {
      const r = await fetchRaw(`${gw.url}/api/big`, { 'accept-encoding': accept });
      assert.equal(r.status, 200);
      assert.equal(r.h('content-encoding'), coding, accept);
      assert.equal(r.h('content-length'), undefined);
      assert.equal(r.h('vary'), 'Accept-Encoding');
      assert.equal(r.h('etag'), 'W/"v1"', 'a strong ETag becomes weak');
      assert.equal(r.h('accept-ranges'), undefined);
      assert.ok(r.body.length < BIG.length / 3, `${r.body.length} bytes for ${BIG.length}`);
      assert.equal(decode(coding, r.body), BIG);
    }
  });

  it('sends the answer as it is, with Vary, to a client that accepts no coding of the gateway', async () => {
    const variants: Record<string, string>[] = [
      {},
      { 'accept-encoding': 'identity' },
      { 'accept-encoding': 'deflate' },
      { 'accept-encoding': 'gzip;q=0' },
    ];
    for (const headers of variants) {
      const r = await fetchRaw(`${gw.url}/api/big`, headers);
      assert.equal(r.h('content-encoding'), undefined);
      assert.equal(r.h('vary'), 'Accept-Encoding');
      assert.equal(r.h('etag'), '"v1"');
      assert.equal(r.h('content-length'), String(BIG.length));
      assert.equal(r.body.toString(), BIG);
    }
  });

  it('never compresses a small answer, a binary type, an encoded answer, no-transform, 206, 304 or HEAD', async () => {
    const gz = { 'accept-encoding': 'gzip, br' };
    const small = await fetchRaw(`${gw.url}/api/small`, gz);
    assert.equal(small.h('content-encoding'), undefined);
    assert.equal(small.body.toString(), '{"ok":true}');
    assert.equal(small.h('vary'), 'Accept-Encoding');
    const png = await fetchRaw(`${gw.url}/api/png`, gz);
    assert.equal(png.h('content-encoding'), undefined);
    assert.equal(png.body.length, BIG.length);
    const encoded = await fetchRaw(`${gw.url}/api/encoded`, gz);
    assert.equal(encoded.h('content-encoding'), 'gzip');
    assert.equal(gunzipSync(encoded.body).toString(), BIG, 'encoded once, by the backend');
    const noTransform = await fetchRaw(`${gw.url}/api/no-transform`, gz);
    assert.equal(noTransform.h('content-encoding'), undefined);
    assert.equal(noTransform.body.toString(), BIG);
    const partial = await fetchRaw(`${gw.url}/api/partial`, gz);
    assert.equal(partial.status, 206);
    assert.equal(partial.h('content-encoding'), undefined);
    assert.equal(partial.body.length, 2000);
    const notModified = await fetchRaw(`${gw.url}/api/not-modified`, gz);
    assert.equal(notModified.status, 304);
    assert.equal(notModified.h('content-encoding'), undefined);
    assert.equal(notModified.h('etag'), '"v1"');
    const head = await fetchRaw(`${gw.url}/api/big`, gz, 'HEAD');
    assert.equal(head.h('content-encoding'), undefined);
    assert.equal(head.h('vary'), 'Accept-Encoding');
  });

  it("adds Accept-Encoding to the backend's Vary", async () => {
    const r = await fetchRaw(`${gw.url}/api/vary`, { 'accept-encoding': 'gzip' });
    assert.equal(r.h('vary'), 'Origin, Accept-Encoding');
  });

  it(
    'lets each chunk of a streamed answer out as it comes: the second line is sent only after the first was read',
    { timeout: 10_000 },
    async () => {
      const res = await request(`${gw.url}/api/lines`, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(res.headers['content-encoding'], 'gzip');
      const gunzip = createGunzip();
      res.body.pipe(gunzip);
      let text = '';
      for await (const chunk of gunzip) {
        text += String(chunk);
        if (text.includes('"line":1') && text.endsWith('\n') && !text.includes('"line":2')) firstLineRead();
      }
      assert.match(text, /"line":2/);
      assert.equal(text.split('\n').filter(Boolean).length, 2);
    },
  );

  it('never compresses an SSE stream or a route with compression: false', async () => {
    const events = await fetchRaw(`${gw.url}/api/events`, { 'accept-encoding': 'gzip' });
    assert.equal(events.h('content-encoding'), undefined);
    assert.match(events.body.toString(), /^data: e+/);
    const plain = await fetchRaw(`${gw.url}/api/plain`, { 'accept-encoding': 'gzip' });
    assert.equal(plain.h('content-encoding'), undefined);
    assert.equal(plain.h('vary'), undefined);
    assert.equal(plain.body.toString(), BIG);
  });

  it('compresses what mapped, filtered and aggregated routes build', async () => {
    const mapped = await fetchRaw(`${gw.url}/api/orders`, { 'accept-encoding': 'br' });
    assert.equal(mapped.h('content-encoding'), 'br');
    const orders = JSON.parse(decode('br', mapped.body)) as { userId: { name: string } }[];
    assert.equal(orders.length, 60);
    assert.equal(orders[0]!.userId.name, 'User name that is long enough');
    const filtered = await fetchRaw(`${gw.url}/api/profile`, { 'accept-encoding': 'gzip' });
    assert.equal(filtered.h('content-encoding'), 'gzip');
    assert.deepEqual(JSON.parse(decode('gzip', filtered.body)), { name: 'Ada', bio: 'b'.repeat(3000) });
    const both = await fetchRaw(`${gw.url}/api/both`, { 'accept-encoding': 'gzip' });
    assert.equal(both.h('content-encoding'), 'gzip');
    const merged = JSON.parse(decode('gzip', both.body)) as Record<string, unknown>;
    assert.deepEqual(Object.keys(merged).sort(), ['orders', 'profile']);
  });

  it('compresses over HTTP/2 (h2c)', async () => {
    const session = connect(gw.url);
    try {
      const answer = await new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
        const stream = session.request({ ':path': '/api/big', 'accept-encoding': 'gzip, br' });
        const chunks: Buffer[] = [];
        let headers: Record<string, unknown> = {};
        stream.on('response', (h) => (headers = h));
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => resolve({ headers, body: Buffer.concat(chunks) }));
        stream.on('error', reject);
      });
      assert.equal(answer.headers['content-encoding'], 'br');
      assert.equal(answer.headers.vary, 'Accept-Encoding');
      assert.equal(decode('br', answer.body), BIG);
    } finally {
      session.close();
    }
  });

  it('curl --compressed reads the same JSON as without compression', async () => {
    const compressed = await run('curl', ['-sS', '--compressed', '-D', '-', `${gw.url}/api/big`]);
    const plain = await run('curl', ['-sS', `${gw.url}/api/big`]);
    assert.match(compressed.stdout, /content-encoding: (br|gzip)/i);
    assert.equal(compressed.stdout.slice(compressed.stdout.indexOf('\r\n\r\n') + 4), BIG);
    assert.equal(plain.stdout, BIG);
  });

  it('Chromium reads the same JSON, compressed', async () => {
    assert.ok(existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: apt-get install -y chromium, as .ci/run does`);
    const browser = await chromium.launch({ executablePath: CHROMIUM });
    try {
      const page = await browser.newPage();
      const response = await page.goto(`${gw.url}/api/big`);
      assert.ok(response);
      assert.match(response.headers()['content-encoding'] ?? '', /^(br|gzip)$/);
      assert.equal(await response.text(), BIG);
    } finally {
      await browser.close();
    }
  });
});

describe('compression settings in portico check', () => {
  const check = (yaml: string) => {
    const loaded = loadConfigText(yaml, 'gateway.yaml', {});
    return loaded.ok ? [] : loaded.problems.map(formatProblem);
  };
  const route = '  - { method: GET, route: /a, service: "127.0.0.1:9", path: /a';

  it('refuses unknown algorithms, bad levels and media types, each at its line', () => {
    const problems = check(`config:
  compression:
    enabled: true
    algorithms: [gzip, deflate]
    levels: { gzip: 10 }
    types: [json]
routes:
${route} }
`);
    assert.equal(problems.length, 3, problems.join('\n'));
    assert.match(problems.join('\n'), /gateway\.yaml:4:.*algorithms/);
    assert.match(problems.join('\n'), /gateway\.yaml:5:.*gzip/);
    assert.match(problems.join('\n'), /gateway\.yaml:6:.*media type/);
  });

  it('refuses compression: true on an SSE or WebSocket route', () => {
    const problems = check(`routes:
${route}, isSSE: true, compression: true }
`);
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0]!, /gateway\.yaml:2:.*never compressed/);
  });
});
