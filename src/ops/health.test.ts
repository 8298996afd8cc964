import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendHealth, sendReady } from './health.js';

describe('health endpoints', () => {
  it('/ready is 503 while draining, 200 otherwise; /health is 200', async () => {
    let draining = false;
    const server = createServer((req, res) => (req.url === '/health' ? sendHealth(res) : sendReady(res, draining)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      let res = await fetch(`${base}/ready`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { status: 'ready' });
      draining = true;
      res = await fetch(`${base}/ready`);
      assert.equal(res.status, 503);
      assert.deepEqual(await res.json(), { status: 'draining' });
      res = await fetch(`${base}/health`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { status: 'ok' });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
