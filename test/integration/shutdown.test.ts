import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startBackend } from '../support/backend.js';
import { startPortico } from '../support/cli-process.js';

describe('graceful shutdown through the CLI', () => {
  it('SIGTERM: stops accepting, finishes the in-flight request, exits 0', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    let arrived: () => void = () => {};
    const requestArrived = new Promise<void>((r) => (arrived = r));
    const backend = await startBackend(async (_req, res) => {
      arrived();
      await held;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('finished');
    });
    const dir = mkdtempSync(join(tmpdir(), 'portico-'));
    const file = join(dir, 'gateway.yaml');
    writeFileSync(file, `routes: [{ method: GET, route: /slow, service: ${backend.host}, path: /slow }]\n`);
    const portico = await startPortico(['--config', file]).catch(async (err: unknown) => {
      await backend.close();
      throw err;
    });
    try {
      const inFlight = request(`${portico.url}/api/slow`);
      await requestArrived;
      portico.child.kill('SIGTERM');
      await portico.waitForLog((l) => l.msg === 'draining: finishing in-flight requests');
      // No new request is served while the old one still runs: refused once the listener is
      // closed, or reset when the connection raced the close (an idle connection is dropped).
      await assert.rejects(
        request(`${portico.url}/health`),
        (err: { code?: string }) => err.code === 'ECONNREFUSED' || err.code === 'ECONNRESET',
      );
      release();
      const res = await inFlight;
      assert.equal(res.statusCode, 200);
      assert.equal(await res.body.text(), 'finished');
      assert.equal(await portico.exited, 0);
    } finally {
      portico.child.kill('SIGKILL');
      await backend.close();
    }
  });

  it('SIGTERM with shutdown.drainDelaySec: /ready 503 and Connection: close for the delay, then exit 0 within 1 s', async () => {
    const backend = await startBackend();
    const dir = mkdtempSync(join(tmpdir(), 'portico-'));
    const file = join(dir, 'gateway.yaml');
    writeFileSync(
      file,
      `config: { shutdown: { drainDelaySec: 1 } }\nroutes: [{ method: GET, route: /a, service: ${backend.host}, path: /a }]\n`,
    );
    const portico = await startPortico(['--config', file]).catch(async (err: unknown) => {
      await backend.close();
      throw err;
    });
    try {
      const signalled = performance.now();
      portico.child.kill('SIGTERM');
      await portico.waitForLog((l) => l.msg === 'draining: finishing in-flight requests');
      const ready = await request(`${portico.url}/ready`);
      assert.equal(ready.statusCode, 503);
      await ready.body.dump();
      const served = await request(`${portico.url}/api/a`);
      assert.deepEqual([served.statusCode, served.headers.connection], [200, 'close']);
      await served.body.dump();
      assert.equal(await portico.exited, 0);
      const elapsed = performance.now() - signalled;
      assert.ok(elapsed >= 1_000 && elapsed < 2_000, `exited ${Math.round(elapsed)} ms after SIGTERM`);
    } finally {
      portico.child.kill('SIGKILL');
      await backend.close();
    }
  });

  it('SIGINT does not wait for the drain delay', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'portico-'));
    const file = join(dir, 'gateway.yaml');
    writeFileSync(file, 'config: { shutdown: { drainDelaySec: 30 } }\nroutes: []\n');
    const portico = await startPortico(['--config', file]);
    try {
      const signalled = performance.now();
      portico.child.kill('SIGINT');
      assert.equal(await portico.exited, 0);
      const elapsed = performance.now() - signalled;
      assert.ok(elapsed < 1_000, `exited ${Math.round(elapsed)} ms after SIGINT`);
    } finally {
      portico.child.kill('SIGKILL');
    }
  });

  it('refuses to start on a taken port with exit 1', async () => {
    const backend = await startBackend();
    const dir = mkdtempSync(join(tmpdir(), 'portico-'));
    const file = join(dir, 'gateway.yaml');
    writeFileSync(file, 'routes: []\n');
    const { spawn } = await import('node:child_process');
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        new URL('../../src/cli/main.ts', import.meta.url).pathname,
        'start',
        '--config',
        file,
        '--host',
        '127.0.0.1',
        '--port',
        String(backend.port),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    await backend.close();
    assert.equal(code, 1);
    assert.match(
      stderr,
      /^portico: cannot listen on 127\.0\.0\.1:\d+: another process listens there \(--port or \$PORT to choose another\)\n$/,
    );
  });
});
