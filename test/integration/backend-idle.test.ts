import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';

/**
 * `timeouts.backendSec` bounds the wait for the response head; `timeouts.backendIdleSec` bounds
 * the silence between body chunks once the head came.
 */
describe('backend body silence: timeouts.backendIdleSec', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let strict: TestGateway;
  let resume: (() => void) | undefined;
  before(async () => {
    backend = await startBackend((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first;');
      // The second chunk comes only when the test says so: the pause is the test's to choose.
      resume = () => res.end('second');
      if (req.url === '/hang') resume = undefined;
    });
    gw = await startGateway(`
routes:
  - { method: GET, route: /pause, service: ${backend.host}, path: /pause }
  - { method: GET, route: /hang, service: ${backend.host}, path: /hang }
config:
  timeouts: { backendSec: 0.2, backendIdleSec: 5 }
`);
    strict = await startGateway(`
routes:
  - { method: GET, route: /hang, service: ${backend.host}, path: /hang }
config:
  timeouts: { backendSec: 5, backendIdleSec: 1 }
`);
  });
  after(() => closeAll(gw, strict, backend));

  it('a body pausing longer than backendSec (but under backendIdleSec) arrives whole', async () => {
    const res = await request(`${gw.url}/api/pause`);
    assert.equal(res.statusCode, 200);
    const chunks: string[] = [];
    for await (const chunk of res.body) {
      chunks.push(String(chunk));
      // Past backendSec plus the backend client's one-second timer resolution; under backendIdleSec.
      if (chunks.length === 1) setTimeout(() => resume?.(), 1600);
    }
    assert.equal(chunks.join(''), 'first;second');
  });

  it('a body silent for backendIdleSec is cut, logged and counted as an upstream timeout', async () => {
    const started = performance.now();
    const res = await request(`${strict.url}/api/hang`);
    assert.equal(res.statusCode, 200);
    await assert.rejects(res.body.text());
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 900, `cut after ${elapsed} ms, before backendIdleSec`);
    const line = strict.logs.find((l) => l.msg === 'upstream error' && l.route === 'GET /hang');
    assert.equal(line?.kind, 'timeout');
    const metrics = await (await request(`${strict.url}/metrics`)).body.text();
    assert.match(metrics, /portico_upstream_errors_total\{[^}]*kind="timeout"[^}]*\} 1/);
  });
});
