/**
 * A plugin chooses the backend in beforeUpstream (docs/plugins.md#choosing-the-backend): only a
 * named upstream of the configuration, by its name; an unknown name, or a route whose kind makes
 * no such call, is the plugin's failure (500 GW_PLUGIN_FAILED, logged with its cause). Over
 * HTTP/1.1 and HTTP/2.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { request, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { h2request } from '../support/http2.js';

const CHOOSE = resolve('test/fixtures/plugins/choose-target.ts');

describe('upstream.setTarget', () => {
  let usual: TestBackend;
  let canary: TestBackend;
  let gw: TestGateway;
  before(async () => {
    usual = await startBackend((req, res) => json(res, 200, { from: 'usual', url: req.url }));
    canary = await startBackend((req, res) => json(res, 200, { from: 'canary', url: req.url, host: req.headers.host }));
    gw = await startGateway(
      [
        'plugins:',
        `  - { name: choose, module: ${CHOOSE} }`,
        'upstreams:',
        `  canary: { targets: ["${canary.host}"] }`,
        // HTTP/2 without TLS (h2c), for the HTTP/2 test.
        'config:',
        '  http2: { cleartext: true }',
        'routes:',
        `  - { method: GET, route: "/orders/{id}", service: ${usual.host}, path: "/v1/orders/{id}", plugins: [choose] }`,
        `  - { method: GET, route: /ws, service: ${usual.host}, path: /ws, isWebSocket: true, plugins: [choose] }`,
        '',
      ].join('\n'),
    );
  });
  after(() => closeAll(gw, usual, canary));

  it('without a choice, the route backend answers', async () => {
    const res = await fetch(`${gw.url}/api/orders/7`);
    assert.deepEqual(await res.json(), { from: 'usual', url: '/v1/orders/7' });
  });

  for (const mode of ['sync', 'async'])
    it(`a named upstream chosen (${mode}) gets the call, with the route's path and its own Host`, async () => {
      const headers: Record<string, string> = { 'x-target': 'canary' };
      if (mode === 'async') headers['x-async'] = '1';
      const res = await fetch(`${gw.url}/api/orders/7?x=1`, { headers });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { from: 'canary', url: '/v1/orders/7?x=1', host: canary.host });
    });

  it('an unknown name, or a URL, is the plugin failing: 500 GW_PLUGIN_FAILED, the cause logged', async () => {
    for (const target of ['nope', `http://${canary.host}`]) {
      const before = canary.seen.length + usual.seen.length;
      const res = await fetch(`${gw.url}/api/orders/7`, { headers: { 'x-target': target } });
      assert.equal(res.status, 500);
      assert.equal(res.headers.get('x-portico-error'), 'GW_PLUGIN_FAILED');
      const requestId = res.headers.get('x-request-id');
      const line = gw.logs.find((l) => l.msg === 'plugin failed' && l.reqId === requestId);
      assert.ok(line, `no "plugin failed" line for ${requestId}`);
      assert.equal(line.stage, 'beforeUpstream');
      assert.match(String((line.err as { message?: string }).message), /not a named upstream/);
      assert.equal(canary.seen.length + usual.seen.length, before, 'no backend was called');
    }
  });

  it('a WebSocket route cannot change its backend: its handshake gets 500 GW_PLUGIN_FAILED', async () => {
    const req = request(`${gw.url}/api/ws`, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'x-target': 'canary',
      },
    }).end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    res.resume();
    assert.equal(res.statusCode, 500);
    assert.equal(res.headers['x-portico-error'], 'GW_PLUGIN_FAILED');
    assert.equal(usual.seen.filter((r) => r.url === '/ws').length, 0);
  });

  it('over HTTP/2 the same', async () => {
    const session = connect(gw.url);
    try {
      const chosen = await h2request(session, '/api/orders/8', { 'x-target': 'canary' });
      assert.equal(chosen.status, 200);
      assert.equal((JSON.parse(chosen.body) as { from: string }).from, 'canary');
      const unknown = await h2request(session, '/api/orders/8', { 'x-target': 'nope' });
      assert.equal(unknown.status, 500);
      assert.equal(unknown.headers['x-portico-error'], 'GW_PLUGIN_FAILED');
    } finally {
      session.close();
    }
  });
});
