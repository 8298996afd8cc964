/**
 * What a reload keeps (docs/operations.md "What a reload rebuilds"): routes the file did not
 * change keep their compiled form and pipeline, a changed route is compiled anew, a change to
 * the rest of the file compiles every route again, and files read under unchanged text (a
 * request schema, a CA) are read again and honoured. Over real sockets, through reloadFromFile
 * as SIGHUP runs it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { request } from 'undici';
import { get } from '../support/http.js';
import { createTestCa, type TestCa } from '../support/certs.js';
import { reloadFromFile } from '../../src/ops/reload.js';
import { loadConfigOffThread } from '../../src/config/load-off-thread.js';

describe('what a reload keeps', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let dir: string;
  let file: string;
  let cas: TestCa[];
  const held: (() => void)[] = [];
  const yaml = (bPath = '/b', timeoutSec = 30, heldPath = '/hold/1') => `
routes:
  - { method: GET, route: /held, service: ${backend.host}, path: ${heldPath} }
  - { method: GET, route: /a, service: ${backend.host}, path: /a }
  - { method: GET, route: /b, service: ${backend.host}, path: ${bPath} }
  - { method: GET, route: "/c/{id}", service: ${backend.host}, path: "/c/{id}" }
  - method: POST
    route: /orders
    service: ${backend.host}
    path: /orders
    request: { schema: order.json }
config:
  timeouts: { backendSec: ${timeoutSec} }
  upstreamTls: { caFile: ca.pem }
`;
  const reload = async (text: string) => {
    writeFileSync(file, text);
    assert.equal(await reloadFromFile(gw.gateway, file, {}, 'test'), true);
    return gw.gateway.config();
  };
  const schema = (quantity: string) =>
    JSON.stringify({ type: 'object', required: ['quantity'], properties: { quantity: { type: quantity } } });
  const postOrder = async (body: unknown) => {
    const res = await request(`${gw.url}/api/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await res.body.dump();
    return res.statusCode;
  };

  before(async () => {
    backend = await startBackend((req, res) => {
      if (req.url?.startsWith('/hold/') === true) held.push(() => json(res, 200, { url: req.url }));
      else json(res, 200, { url: req.url });
    });
    cas = [createTestCa(), createTestCa()];
    dir = mkdtempSync(join(tmpdir(), 'portico-reload-keeps-'));
    file = join(dir, 'gateway.yaml');
    writeFileSync(join(dir, 'order.json'), schema('integer'));
    copyFileSync(cas[0]!.caFile, join(dir, 'ca.pem'));
    const first = yaml().replace('order.json', join(dir, 'order.json')).replace('ca.pem', join(dir, 'ca.pem'));
    gw = await startGateway(first);
    // The gateway started from text under another name: this first reload compiles everything.
    await reload(yaml());
  });
  after(async () => {
    for (const release of held.splice(0)) release();
    await gw?.close();
    await backend?.close();
    for (const ca of cas ?? []) ca.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every route of an unchanged file, and serves them', async () => {
    const before = gw.gateway.config();
    const after = await reload(yaml());
    assert.equal(after.settings, before.settings);
    assert.equal(after.upstreams, before.upstreams);
    for (const i of [0, 1, 2, 3]) assert.equal(after.routes[i], before.routes[i], `routes[${i}] kept`);
    assert.deepEqual((await get(`${gw.url}/api/c/7`)).json(), { url: '/c/7' });
    assert.deepEqual((await get(`${gw.url}/api/b`)).json(), { url: '/b' });
  });

  it('compiles a changed route anew and keeps the others', async () => {
    const before = gw.gateway.config();
    const after = await reload(yaml('/b-v2'));
    assert.notEqual(after.routes[2], before.routes[2]);
    assert.equal(after.routes[1], before.routes[1]);
    assert.equal(after.routes[3], before.routes[3]);
    assert.deepEqual((await get(`${gw.url}/api/b`)).json(), { url: '/b-v2' });
    assert.deepEqual((await get(`${gw.url}/api/a`)).json(), { url: '/a' });
  });

  it('lets a request in flight finish on the route it started with when its route changed', async () => {
    const pending = get(`${gw.url}/api/held`);
    while (held.length === 0) await new Promise((r) => setImmediate(r));
    await reload(yaml('/b-v2', 30, '/hold/2'));
    const later = get(`${gw.url}/api/held`);
    while (held.length < 2) await new Promise((r) => setImmediate(r));
    for (const release of held.splice(0)) release();
    assert.deepEqual((await pending).json(), { url: '/hold/1' });
    assert.deepEqual((await later).json(), { url: '/hold/2' });
  });

  it('does not mix two reloads when one is swapped in while the other builds in slices', async () => {
    const served = gw.gateway.config();
    const compiled = async (text: string) => {
      writeFileSync(file, text);
      const loaded = await loadConfigOffThread(file, {}, served);
      assert.ok(loaded.ok);
      return loaded.config;
    };
    // Each changes another route and keeps the served table: built on the same served one.
    const sliced = await compiled(yaml('/b-sliced', 30, '/hold/2'));
    const whole = await compiled(yaml('/b-v2', 30, '/hold/whole'));
    const building = gw.gateway.reloadInSlices(sliced);
    gw.gateway.reload(whole);
    await building;
    assert.equal(gw.gateway.config(), sliced);
    assert.deepEqual((await get(`${gw.url}/api/b`)).json(), { url: '/b-sliced' });
    const pending = get(`${gw.url}/api/held`);
    while (held.length === 0) await new Promise((r) => setImmediate(r));
    held.shift()!();
    assert.deepEqual((await pending).json(), { url: '/hold/2' });
  });

  it('compiles every route again when the rest of the file changed', async () => {
    const before = gw.gateway.config();
    const after = await reload(yaml('/b-v2', 31));
    assert.notEqual(after.settings, before.settings);
    assert.equal(after.settings.timeouts.backendSec, 31);
    for (const i of [0, 1, 2, 3]) assert.notEqual(after.routes[i], before.routes[i], `routes[${i}] compiled again`);
    assert.equal(after.routes[1]!.timeouts.backendSec, 31);
    assert.deepEqual((await get(`${gw.url}/api/a`)).json(), { url: '/a' });
  });

  it('reads a request schema again when its file changed under an unchanged route', async () => {
    assert.equal(await postOrder({ quantity: 'two' }), 400);
    writeFileSync(join(dir, 'order.json'), schema('string'));
    await reload(yaml('/b-v2', 31));
    assert.equal(await postOrder({ quantity: 'two' }), 200);
    assert.equal(await postOrder({ quantity: 2 }), 400);
  });

  it('compiles the origins and routes again when a CA file changed under the same path', async () => {
    const before = gw.gateway.config();
    copyFileSync(cas[1]!.caFile, join(dir, 'ca.pem'));
    const after = await reload(yaml('/b-v2', 31));
    assert.notEqual(after.upstreamTls?.id, before.upstreamTls?.id);
    assert.notEqual(after.settings, before.settings);
    assert.notEqual(after.routes[0], before.routes[0]);
    assert.deepEqual((await get(`${gw.url}/api/a`)).json(), { url: '/a' });
  });
});
