/**
 * Operations through the real CLI: reload on SIGHUP and with --watch (valid and invalid files), and
 * `--workers 2`: both workers serve, reload together, share /metrics and stop cleanly (exit 0).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { STARTUP_MS, startPortico, type PorticoProcess } from '../support/cli-process.js';
import { getStatus } from '../support/http.js';

/** A new connection each time, so the cluster's round robin spreads requests over workers. */
const getOnNewConnection = (url: string) => getStatus(url, { reset: true });

function routes(host: string, names: string[]): string {
  return `routes:\n${names.map((n) => `  - { method: GET, route: /${n}, service: ${host}, path: /${n} }`).join('\n')}\n`;
}

describe('reload through the CLI', () => {
  let backend: TestBackend;
  let dir: string;
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, { url: req.url }));
    dir = mkdtempSync(join(tmpdir(), 'portico-cli-'));
  });
  after(async () => {
    await backend?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('SIGHUP reloads a valid file; an invalid one is logged and the running configuration stays', async () => {
    const file = join(dir, 'hup.yaml');
    writeFileSync(file, routes(backend.host, ['a']));
    const p = await startPortico(['--config', file]);
    try {
      assert.equal(await getOnNewConnection(`${p.url}/api/b`), 404);
      writeFileSync(file, routes(backend.host, ['a', 'b']));
      p.child.kill('SIGHUP');
      await p.waitForLog((l) => l.msg === 'configuration reloaded');
      assert.equal(await getOnNewConnection(`${p.url}/api/b`), 200);

      writeFileSync(file, 'routes:\n  - { method: GET, route: /c }\n');
      p.child.kill('SIGHUP');
      const rejected = await p.waitForLog(
        (l) => l.msg === 'configuration reload rejected; keeping the running configuration',
      );
      assert.deepEqual(rejected.problems, [
        `${file}:2:5: routes[0]: missing required key "service"`,
        `${file}:2:5: routes[0]: missing required key "path"`,
      ]);
      assert.equal(await getOnNewConnection(`${p.url}/api/a`), 200);
      assert.equal(await getOnNewConnection(`${p.url}/api/b`), 200);
      assert.equal(await getOnNewConnection(`${p.url}/api/c`), 404);
    } finally {
      p.child.kill('SIGTERM');
      assert.equal(await p.exited, 0);
    }
  });

  it('--watch reloads when the file changes, without a signal', async () => {
    const file = join(dir, 'watch.yaml');
    writeFileSync(file, routes(backend.host, ['a']));
    const p = await startPortico(['--config', file, '--watch']);
    try {
      writeFileSync(file, routes(backend.host, ['a', 'w']));
      const reloaded = await p.waitForLog((l) => l.msg === 'reloaded');
      assert.equal(reloaded.why, 'file change');
      assert.equal(await getOnNewConnection(`${p.url}/api/w`), 200);
      writeFileSync(file, 'routes: [ broken');
      await p.waitForLog((l) => l.msg === 'configuration reload rejected; keeping the running configuration');
      assert.equal(await getOnNewConnection(`${p.url}/api/w`), 200);
    } finally {
      p.child.kill('SIGTERM');
      assert.equal(await p.exited, 0);
    }
  });
});

describe('portico start --workers 2', () => {
  let backend: TestBackend;
  let dir: string;
  let file: string;
  let p: PorticoProcess;
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, { url: req.url }));
    dir = mkdtempSync(join(tmpdir(), 'portico-workers-'));
    file = join(dir, 'gateway.yaml');
    writeFileSync(file, routes(backend.host, ['a']));
    p = await startPortico(['--config', file, '--workers', '2']);
    // Both workers listen (the first one's line resolved startPortico).
    await p.waitForLog(
      (l) =>
        typeof l.msg === 'string' &&
        l.msg.startsWith('portico listening') &&
        l.worker !== p.logs.find((x) => typeof x.msg === 'string' && x.msg.startsWith('portico listening'))!.worker,
      STARTUP_MS,
    );
  });
  after(async () => {
    // p is unset when the gateway never started (startPortico stopped it).
    if (p !== undefined && p.child.exitCode === null) p.child.kill('SIGKILL');
    await backend?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('listens on one port with two workers that both serve', async () => {
    const listening = p.logs.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('portico listening'));
    assert.equal(listening.length, 2);
    assert.deepEqual(
      listening.map((l) => l.port),
      [p.port, p.port],
    );
    for (let i = 0; i < 10; i++) assert.equal(await getOnNewConnection(`${p.url}/api/a`), 200);
    await p.waitForLog(() => p.logs.filter((l) => l.msg === 'request').length >= 10);
    const served = new Set(p.logs.filter((l) => l.msg === 'request').map((l) => l.worker));
    assert.equal(served.size, 2);
  });

  it('aggregates /metrics over the workers', async () => {
    const res = await request(`${p.url}/metrics`, { reset: true });
    const text = await res.body.text();
    assert.equal(res.statusCode, 200);
    assert.match(text, /^portico_requests_total\{route="\/a",method="GET",status_class="2xx"\} 10$/m);
    assert.match(text, /^portico_request_duration_seconds_count\{route="\/a",method="GET",status_class="2xx"\} 10$/m);
    assert.match(
      text,
      /^portico_request_duration_seconds_bucket\{le="\+Inf",route="\/a",method="GET",status_class="2xx"\} 10$/m,
    );
  });

  it('reloads every worker on SIGHUP to the primary', async () => {
    writeFileSync(file, routes(backend.host, ['a', 'b']));
    p.child.kill('SIGHUP');
    await p.waitForLog(() => p.logs.filter((l) => l.msg === 'configuration reloaded').length === 2);
    for (let i = 0; i < 6; i++) assert.equal(await getOnNewConnection(`${p.url}/api/b`), 200);
  });

  it('logs an invalid file once, in the primary, and keeps serving', async () => {
    writeFileSync(file, 'routes:\n  - { method: GET }\n');
    p.child.kill('SIGHUP');
    await p.waitForLog(
      (l) => l.role === 'primary' && l.msg === 'configuration reload rejected; keeping the running configuration',
    );
    assert.equal(await getOnNewConnection(`${p.url}/api/b`), 200);
  });

  it('stops both workers gracefully on SIGTERM and exits 0', async () => {
    p.child.kill('SIGTERM');
    assert.equal(await p.exited, 0);
    assert.equal(p.logs.filter((l) => l.msg === 'stopped').length, 2);
    assert.equal(p.logs.filter((l) => l.msg === 'all workers stopped').length, 1);
  });
});
