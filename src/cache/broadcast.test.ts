import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as turn } from 'node:timers/promises';
import { MAX_PENDING, memoryDropper } from './broadcast.js';
import { createCacheStore, type CacheEntry } from './store.js';

const entry = {
  status: 200,
  headers: {},
  body: Buffer.from('x'),
  lifetimeSec: 60,
  staleIfErrorSec: 0,
} as unknown as CacheEntry;

function filled(keys: readonly [string, string][]) {
  const store = createCacheStore({ maxBytes: 1024 * 1024 });
  for (const [primary, route] of keys) store.set(primary, [], '', entry, route);
  return store;
}
const has = (store: ReturnType<typeof createCacheStore>, primary: string) => store.varyOf(primary) !== undefined;

describe("applying other replicas' targets to the memory level", () => {
  it('drops an exact URL at once, and prefix and route targets together in the next turn', async () => {
    const store = filled([
      ['a.test\u0000/items/1', 'GET /items/{id}'],
      ['a.test\u0000/items/2', 'GET /items/{id}'],
      ['b.test\u0000/items/3', 'GET /items/{id}'],
      ['a.test\u0000/other/1', 'GET /other/{id}'],
      ['a.test\u0000/kept', 'GET /kept'],
    ]);
    let backlogs = 0;
    const apply = memoryDropper(store, () => backlogs++);
    apply({ kind: 'url', host: 'a.test', path: '/items/1' });
    assert.equal(has(store, 'a.test\u0000/items/1'), false, 'an exact URL goes at once');
    apply({ kind: 'prefix', host: 'a.test', path: '/items/' });
    apply({ kind: 'route', host: undefined, routeId: 'GET /other/{id}' });
    assert.equal(has(store, 'a.test\u0000/items/2'), true, 'gathered for one pass');
    await turn();
    assert.equal(has(store, 'a.test\u0000/items/2'), false);
    assert.equal(has(store, 'b.test\u0000/items/3'), true, 'another host keeps its own');
    assert.equal(has(store, 'a.test\u0000/other/1'), false);
    assert.equal(has(store, 'a.test\u0000/kept'), true);
    assert.equal(backlogs, 0);
  });

  it('gives up on single passes past MAX_PENDING targets in one turn: one backlog call instead', async () => {
    const store = filled([['a.test\u0000/x', 'GET /x']]);
    let backlogs = 0;
    const apply = memoryDropper(store, () => {
      backlogs++;
      store.clear();
    });
    for (let i = 0; i <= MAX_PENDING + 10; i++) apply({ kind: 'prefix', host: undefined, path: `/nothing/${i}` });
    await turn();
    assert.equal(backlogs, 1);
    assert.equal(store.stats().entries, 0);
    // The next turn starts afresh.
    apply({ kind: 'prefix', host: undefined, path: '/nothing' });
    await turn();
    assert.equal(backlogs, 1);
  });
});
