import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PoolMaker } from './pools.js';
import { parseService, isOrigin } from '../config/syntax/service.js';
import type { Pool } from 'undici';

const backend = createServer((_req, res) => res.end('ok'));
await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
after(() => backend.close());
const service = parseService(`127.0.0.1:${(backend.address() as AddressInfo).port}`);
if (!isOrigin(service)) throw new Error(service.error);

/** The status of one GET through `pool`'s dispatcher, or the error's code. */
async function call(pool: { dispatcher: unknown }): Promise<number | string> {
  try {
    const res = await (pool.dispatcher as Pool).request({ path: '/', method: 'GET' });
    await res.body.text();
    return res.statusCode;
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

describe('PoolMaker.holdRetired', () => {
  it('keeps a pool retired while held open for new calls, and closes it at the release', async () => {
    const pools = new PoolMaker(4);
    const held = pools.make(service);
    const release = pools.holdRetired();
    pools.retire(held);
    assert.equal(await call(held), 200);
    release();
    assert.equal(await call(held), 'UND_ERR_CLOSED');
    await pools.close();
  });

  it('closes a pool retired without a hold at once', async () => {
    const pools = new PoolMaker(4);
    const pool = pools.make(service);
    pools.retire(pool);
    assert.equal(await call(pool), 'UND_ERR_CLOSED');
    await pools.close();
  });
});
