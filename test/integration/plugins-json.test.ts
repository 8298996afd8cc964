/**
 * A plugin transforms JSON answers (`onResponseBody`, docs/plugins.md#transforming-a-json-response):
 * the backend's 2xx JSON, decoded and parsed, becomes what the plugins return, with its own
 * Content-Length, compressed by the gateway when the client asks; any other answer streams
 * untouched; an answer past the limit or that does not parse is a 502 with its code. Over
 * HTTP/1.1 and HTTP/2, with the example plugin of the docs and a fixture.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { request as httpRequest } from 'node:http';
import { gunzipSync, gzipSync } from 'node:zlib';
import { resolve } from 'node:path';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { h2request } from '../support/http2.js';
import { loadConfigText } from '../../src/config/load.js';
import { loadPlugins } from '../../src/plugins/load.js';

const REDACT = resolve('examples/plugins/json-redact.ts');
const TAG = resolve('test/fixtures/plugins/json-tag.ts');
const USER = { id: 7, name: 'Ada', password: 'x', friends: [{ id: 8, password: 'y' }] };
const BIG = { items: Array.from({ length: 400 }, (_, i) => ({ id: i, note: 'some text to compress' })) };

/** The backend's answers, by path. */
function backendAnswer(url: string | undefined, res: import('node:http').ServerResponse): void {
  switch (url) {
    case '/user':
      return json(res, 200, USER);
    case '/gzip': {
      const body = gzipSync(JSON.stringify(USER));
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': body.length,
      });
      return void res.end(body);
    }
    case '/text':
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.end('password: x');
    case '/missing':
      return json(res, 404, { error: 'nope', password: 'x' });
    case '/bad':
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end('{"not json');
    case '/big':
      return json(res, 200, BIG);
    case '/big-chunked':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(JSON.stringify(BIG).slice(0, 3000));
      return void res.end(JSON.stringify(BIG).slice(3000));
    default:
      return json(res, 200, { path: url });
  }
}

describe('onResponseBody: JSON answers transformed by plugins', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((req, res) => backendAnswer(req.url, res));
    const route = (path: string, plugin: string, extra = '') =>
      `  - { method: GET, route: /${plugin}${path}, service: ${backend.host}, path: ${path}, plugins: [${plugin}]${extra} }`;
    gw = await startGateway(
      [
        'plugins:',
        `  - { name: redact, module: ${REDACT}, options: { remove: [password] } }`,
        `  - { name: tag, module: ${TAG}, timeoutMs: 200 }`,
        'config:',
        '  http2: { cleartext: true }',
        '  compression: { enabled: true }',
        // The limit of a plugin that asks for `jsonResponse: true`.
        '  limits: { maxMappingBodyBytes: 4096 }',
        'routes:',
        ...['/user', '/gzip', '/text', '/missing', '/bad'].map((p) => route(p, 'redact')),
        ...['/user', '/big', '/big-chunked'].map((p) => route(p, 'tag')),
        route('/big', 'redact'),
        `  - { method: GET, route: /plain/user, service: ${backend.host}, path: /user }`,
        '',
      ].join('\n'),
    );
  });
  after(() => closeAll(gw, backend));

  it('the example redacts the answer at any depth; Content-Length is the new body’s', async () => {
    const res = await fetch(`${gw.url}/api/redact/user`, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.deepEqual(JSON.parse(text), { id: 7, name: 'Ada', friends: [{ id: 8 }] });
    assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(text)));
    assert.equal(res.headers.get('x-redacted'), 'true');
  });

  it('a gzip answer from the backend is decoded, transformed and sent with its new length', async () => {
    const res = await fetch(`${gw.url}/api/redact/gzip`, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-encoding'), null);
    assert.deepEqual(await res.json(), { id: 7, name: 'Ada', friends: [{ id: 8 }] });
  });

  it('what the plugin produced is what the gateway compresses', async () => {
    const got = await new Promise<{ headers: import('node:http').IncomingHttpHeaders; body: Buffer }>((done, fail) => {
      httpRequest(`${gw.url}/api/redact/big`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done({ headers: res.headers, body: Buffer.concat(chunks) }));
      })
        .on('error', fail)
        .end();
    });
    assert.equal(got.headers['content-encoding'], 'gzip');
    assert.equal(got.headers['x-redacted'], 'true');
    assert.deepEqual(JSON.parse(gunzipSync(got.body).toString()), BIG);
  });

  it('a non-JSON answer, and a non-2xx one, stream through untouched', async () => {
    const text = await fetch(`${gw.url}/api/redact/text`);
    assert.equal(await text.text(), 'password: x');
    assert.equal(text.headers.get('x-redacted'), null);
    const missing = await fetch(`${gw.url}/api/redact/missing`);
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { error: 'nope', password: 'x' });
  });

  it('an answer labelled JSON that does not parse: 502 GW_PLUGIN_RESPONSE_INVALID', async () => {
    const res = await fetch(`${gw.url}/api/redact/bad`);
    assert.equal(res.status, 502);
    assert.equal(res.headers.get('x-portico-error'), 'GW_PLUGIN_RESPONSE_INVALID');
  });

  for (const path of ['/big', '/big-chunked'])
    it(`an answer past the limit (${path}): 502 GW_PLUGIN_RESPONSE_TOO_LARGE, nothing of it relayed`, async () => {
      const res = await fetch(`${gw.url}/api/tag${path}`);
      assert.equal(res.status, 502);
      assert.equal(res.headers.get('x-portico-error'), 'GW_PLUGIN_RESPONSE_TOO_LARGE');
      assert.equal(((await res.json()) as { success: boolean }).success, false);
    });

  it('nothing returned: the backend’s bytes go out as they were', async () => {
    const res = await fetch(`${gw.url}/api/tag/user`, { headers: { 'x-keep': '1' } });
    assert.deepEqual(await res.json(), USER);
  });

  it('an async transform', async () => {
    const res = await fetch(`${gw.url}/api/tag/user`, { headers: { 'x-async': '1' } });
    assert.deepEqual(await res.json(), { ...USER, tagged: true });
  });

  const failures = [
    { header: 'x-throw', status: 500, code: 'GW_PLUGIN_FAILED' },
    { header: 'x-reject', status: 500, code: 'GW_PLUGIN_FAILED' },
    { header: 'x-bigint', status: 500, code: 'GW_PLUGIN_FAILED' },
    { header: 'x-hang', status: 504, code: 'GW_PLUGIN_TIMEOUT' },
  ];
  it('a plugin that throws, rejects, returns what JSON cannot hold, or hangs: 500 or 504 with the code, logged', async () => {
    for (const { header, status, code } of failures) {
      const res = await fetch(`${gw.url}/api/tag/user`, { headers: { [header]: '1' } });
      assert.equal(res.status, status, header);
      assert.equal(res.headers.get('x-portico-error'), code);
      const requestId = res.headers.get('x-request-id');
      const line = gw.logs.find((l) => String(l.msg).startsWith('plugin ') && l.reqId === requestId);
      assert.equal(line?.stage, 'onResponseBody', header);
    }
  });

  it('over HTTP/2 the same', async () => {
    const session = connect(gw.url);
    try {
      const redacted = await h2request(session, '/api/redact/user');
      assert.equal(redacted.status, 200);
      assert.deepEqual(JSON.parse(redacted.body), { id: 7, name: 'Ada', friends: [{ id: 8 }] });
      assert.equal(redacted.headers['content-length'], String(Buffer.byteLength(redacted.body)));
      const tooLarge = await h2request(session, '/api/tag/big');
      assert.equal(tooLarge.status, 502);
      assert.equal(tooLarge.headers['x-portico-error'], 'GW_PLUGIN_RESPONSE_TOO_LARGE');
    } finally {
      session.close();
    }
  });

  it('a route without such a plugin is untouched', async () => {
    const res = await fetch(`${gw.url}/api/plain/user`);
    assert.deepEqual(await res.json(), USER);
  });
});

describe('onResponseBody on a route that cannot run it', () => {
  it('is a problem of the configuration, located at the plugin, not a silent skip', async () => {
    const yaml = [
      'plugins:',
      `  - { name: tag, module: ${TAG} }`,
      'routes:',
      '  - { method: GET, route: /ok, service: "127.0.0.1:1", path: /ok, plugins: [tag] }',
      '  - { method: GET, route: /m, service: "127.0.0.1:1", path: /m, response: { deny: [x] }, plugins: [tag] }',
      '',
    ].join('\n');
    const loaded = loadConfigText(yaml, 'gateway.yaml', {});
    assert.ok(loaded.ok);
    const plugins = await loadPlugins(loaded.config);
    assert.equal(plugins.ok, false);
    const [problem] = plugins.ok ? [] : plugins.problems;
    assert.equal(problem?.line, 2);
    assert.match(problem?.message ?? '', /"tag" transforms JSON answers .* route GET \/m \(mapping\) runs it/);
  });
});
