/**
 * Hot reload in process (ops/reload.ts): valid, invalid (the running configuration
 * stays, every problem logged), in-flight requests finish on their configuration, state survives,
 * a load loop sees zero errors while the file is reloaded 20 times, and a large file is built in
 * slices while the running configuration answers (HTTP/1.1 and HTTP/2).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { get } from '../support/http.js';
import { waitFor } from '../support/wait-for.js';
import { reloadFromFile } from '../../src/ops/reload.js';
import { connect } from 'node:http2';
import { h2request } from '../support/http2.js';

describe('hot reload', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let dir: string;
  let file: string;
  const release: (() => void)[] = [];
  const yaml = (extra = '', settings = '') => `
routes:
  - method: GET
    route: /a
    service: ${backend.host}
    path: /a
  - method: GET
    route: /slow
    service: ${backend.host}
    path: /slow
  - method: GET
    route: /limited
    service: ${backend.host}
    path: /limited
    rateLimit:
      requestsPerSec: 0.01
      burst: 1
${extra}
config:
  circuitBreaker:
    enabled: true
    maxFailures: 1
${settings}`;

  before(async () => {
    backend = await startBackend((req, res) => {
      if (req.url === '/slow') return void release.push(() => json(res, 200, { slow: true }));
      if (req.url === '/fail') return json(res, 500, {});
      json(res, 200, { url: req.url });
    });
    dir = mkdtempSync(join(tmpdir(), 'portico-reload-'));
    file = join(dir, 'gateway.yaml');
    writeFileSync(file, yaml());
    gw = await startGateway(yaml());
  });
  after(async () => {
    for (const r of release) r();
    await gw?.close();
    await backend?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves a valid new file at once', async () => {
    assert.equal((await get(`${gw.url}/api/b`)).status, 404);
    writeFileSync(file, yaml(`  - { method: GET, route: /b, service: ${backend.host}, path: /b-v2 }`));
    assert.equal(await reloadFromFile(gw.gateway, file, {}, 'test'), true);
    const b = await get(`${gw.url}/api/b`);
    assert.equal(b.status, 200);
    assert.deepEqual(b.json(), { url: '/b-v2' });
    assert.equal(gw.logs.filter((l) => l.msg === 'configuration reloaded').length, 1);
  });

  it('keeps the running configuration when the new file is invalid, and logs every problem', async () => {
    writeFileSync(
      file,
      `routes:\n  - { method: GET, route: /c, service: ${backend.host} }\n  - { method: FETCH, route: /d, service: x, path: /d }\nconfig: { cors: { origins: "*", credentials: true } }\n`,
    );
    assert.equal(await reloadFromFile(gw.gateway, file, {}, 'test'), false);
    assert.equal((await get(`${gw.url}/api/b`)).status, 200);
    assert.equal((await get(`${gw.url}/api/c`)).status, 404);
    const rejected = gw.logs.filter(
      (l) => l.msg === 'configuration reload rejected; keeping the running configuration',
    );
    assert.equal(rejected.length, 1);
    assert.equal(rejected[0]!.level, 50);
    assert.deepEqual(rejected[0]!.problems, [
      `${file}:2:5: routes[0]: missing required key "path"`,
      `${file}:3:15: routes[1].method: "FETCH" is not one of GET, POST, PUT, DELETE, PATCH, HEAD, OPTIONS`,
      `${file}:4:46: config.cors: origins "*" cannot be combined with credentials: true (browsers refuse it); list the allowed origins`,
    ]);
  });

  it('lets an in-flight request finish on the configuration it started with', async () => {
    const pending = get(`${gw.url}/api/slow`);
    while (release.length === 0) await new Promise((r) => setImmediate(r));
    writeFileSync(
      file,
      yaml().replace(/ {2}- method: GET\n {4}route: \/slow\n {4}service: .*\n {4}path: \/slow\n/, ''),
    );
    assert.equal(await reloadFromFile(gw.gateway, file, {}, 'test'), true);
    assert.equal((await get(`${gw.url}/api/slow`)).status, 404);
    release.shift()!();
    const done = await pending;
    assert.equal(done.status, 200);
    assert.deepEqual(done.json(), { slow: true });
  });

  it('keeps rate-limit and circuit state across a reload', async () => {
    writeFileSync(file, yaml(`  - { method: GET, route: /fail, service: ${backend.host}, path: /fail }`));
    assert.equal(await reloadFromFile(gw.gateway, file, {}, 'test'), true);
    assert.equal((await get(`${gw.url}/api/limited`)).status, 200);
    assert.equal((await get(`${gw.url}/api/limited`)).status, 429);
    assert.equal((await get(`${gw.url}/api/fail`)).status, 500);
    assert.equal((await get(`${gw.url}/api/a`)).status, 503); // same origin: circuit open
    writeFileSync(
      file,
      yaml(`  - { method: GET, route: /fail, service: ${backend.host}, path: /fail }`, '    timeoutSec: 60'),
    );
    assert.equal(await reloadFromFile(gw.gateway, file, {}, 'test'), true);
    assert.equal((await get(`${gw.url}/api/limited`)).status, 429);
    assert.equal((await get(`${gw.url}/api/a`)).status, 503);
    // Circuit off: every request passes again (and the next reload starts it closed).
    writeFileSync(file, yaml('', '').replace('enabled: true', 'enabled: false'));
    assert.equal(await reloadFromFile(gw.gateway, file, {}, 'test'), true);
    assert.equal((await get(`${gw.url}/api/a`)).status, 200);
  });
});

describe('hot reload under load', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let dir: string;
  let file: string;
  const config = (version: number) => `
routes:
  - method: GET
    route: /items/{id}
    service: ${backend.host}
    path: /v${version % 2}/items/{id}
  - method: GET
    route: /extra${version}
    service: ${backend.host}
    path: /extra
config:
  rateLimit:
    enabled: ${version % 2 === 0}
    requestsPerSec: 100000
`;
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, { url: req.url }));
    dir = mkdtempSync(join(tmpdir(), 'portico-reload-load-'));
    file = join(dir, 'gateway.yaml');
    gw = await startGateway(config(0));
  });
  after(async () => {
    await gw?.close();
    await backend?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sees zero errors from 20 keep-alive clients while the file is reloaded 20 times', async () => {
    const pool = new Pool(gw.url, { connections: 20, pipelining: 1 });
    let stop = false;
    let ok = 0;
    const errors: string[] = [];
    const client = async (n: number) => {
      while (!stop) {
        try {
          const res = await pool.request({ path: `/api/items/${n}`, method: 'GET' });
          const body = (await res.body.json()) as { url: string };
          if (res.statusCode !== 200 || !/^\/v[01]\/items\/\d+$/.test(body.url))
            errors.push(`${res.statusCode} ${body.url}`);
          else ok++;
        } catch (err) {
          errors.push(String(err));
        }
      }
    };
    const clients = Array.from({ length: 20 }, (_, n) => client(n));
    let reloads = 0;
    // Each reload lands while the clients are busy: a few requests complete between two reloads.
    const someRequests = async () => {
      const before = ok + errors.length;
      await waitFor(() => ok + errors.length >= before + 10, 10_000, 'ten more requests between reloads');
    };
    for (let v = 1; v <= 20; v++) {
      await someRequests();
      writeFileSync(file, config(v));
      if (await reloadFromFile(gw.gateway, file, {}, 'load test')) reloads++;
    }
    await someRequests();
    stop = true;
    await Promise.all(clients);
    await pool.close();
    assert.equal(reloads, 20);
    assert.deepEqual(errors, []);
    assert.ok(ok > 100, `only ${ok} requests completed`);
    assert.equal((await get(`${gw.url}/api/extra20`)).status, 200);
    assert.equal((await get(`${gw.url}/api/extra19`)).status, 404);
  });
});

describe('hot reload of a large file', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let dir: string;
  let file: string;
  /** `/items/{id}` to `/v{version}/items/{id}`, among `count` other routes. */
  const config = (version: number, count: number) => {
    const lines = [
      'routes:',
      `  - { method: GET, route: "/items/{id}", service: "${backend.host}", path: "/v${version}/items/{id}", public: true }`,
    ];
    for (let i = 0; i < count; i++)
      lines.push(
        `  - { method: GET, route: "/r${i}/items/{id}", service: "${backend.host}", path: "/r${i}/{id}", public: true${i % 2 === 0 ? `, hosts: [t${i}.example.com]` : ''} }`,
      );
    return `${lines.join('\n')}\nconfig:\n  http2: { cleartext: true }\n`;
  };
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, { url: req.url }));
    dir = mkdtempSync(join(tmpdir(), 'portico-reload-large-'));
    file = join(dir, 'gateway.yaml');
    gw = await startGateway(config(0, 10));
  });
  after(async () => {
    await gw?.close();
    await backend?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers on the running configuration while 4,000 routes are loaded and built, then on the new one', async () => {
    const session = connect(gw.url);
    const pool = new Pool(gw.url, { connections: 4, pipelining: 1 });
    try {
      const versionOf = async (h2: boolean, n: number): Promise<string> => {
        const path = `/api/items/${n}`;
        const { status, body } = h2
          ? await h2request(session, path)
          : await pool.request({ path, method: 'GET' }).then(async (r) => ({
              status: r.statusCode,
              body: await r.body.text(),
            }));
        assert.equal(status, 200, body);
        return (JSON.parse(body) as { url: string }).url.split('/')[1]!;
      };
      writeFileSync(file, config(1, 4000));
      let reloaded = false;
      const reload = reloadFromFile(gw.gateway, file, {}, 'large file').then((ok) => {
        reloaded = true;
        return ok;
      });
      // Requests sent and answered before the reload is done: the old table answers them.
      const during: string[] = [];
      for (let n = 0; !reloaded; n++) {
        const [h1, h2] = await Promise.all([versionOf(false, n), versionOf(true, n)]);
        if (!reloaded) during.push(h1, h2);
      }
      assert.equal(await reload, true);
      assert.ok(during.length >= 4, `only ${during.length} answers while reloading`);
      assert.deepEqual(new Set(during.slice(0, 2)), new Set(['v0']));
      assert.deepEqual(
        during.filter((v) => v !== 'v0' && v !== 'v1'),
        [],
      );
      assert.equal(await versionOf(false, 1), 'v1');
      assert.equal(await versionOf(true, 2), 'v1');
      assert.equal((await get(`${gw.url}/api/r3999/items/7`)).status, 200);
    } finally {
      session.close();
      await pool.close();
    }
  });
});
