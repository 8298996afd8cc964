/**
 * The mapping cache end to end (docs/design-decisions.md "Response mapping"): hits across
 * client requests, TTL expiry, true LRU eviction, failures not cached, one shared call for
 * concurrent requests, survival across reloads, and the circuit skipping rules without a call.
 * Each test starts its own gateway so call counts and cache counters start from zero.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request } from 'undici';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import type { MappingCacheStats } from '../../src/mapping/types.js';
import { createManualClock, type ManualClock } from '../support/manual-clock.js';
import { waitFor } from '../support/wait-for.js';

/** `/item/{key}` -> `{"key":"<key>"}`; `/list/{n}` -> n items over 5 keys. */
function primaryHandler(req: IncomingMessage, res: ServerResponse): void {
  const [, kind, arg] = (req.url ?? '/').split('/');
  if (kind === 'item') return json(res, 200, { key: arg });
  if (kind === 'list')
    return json(
      res,
      200,
      Array.from({ length: Number(arg) }, (_, i) => ({ i, key: `k${i % 5}` })),
    );
  json(res, 404, {});
}

interface Setup {
  readonly gw: TestGateway;
  readonly primary: TestBackend;
  readonly users: TestBackend;
  /** The gateway's clock: TTLs run out when the test advances it. */
  readonly clock: ManualClock;
  /** Calls the users service received per path. */
  calls(path: string): number;
  /** GET /api/item/{key}: the `user` tag, or undefined when the item has none. */
  item(key: string): Promise<unknown>;
  yaml: string;
}

interface SetupOptions {
  /** The `config.mappingCache` lines. */
  readonly cache: string;
  /** The users service; by default it answers `{"at": URL}`. */
  readonly usersHandler?: (req: IncomingMessage, res: ServerResponse) => void;
  /** More `config` lines. */
  readonly extra?: string;
}

async function setup({ cache, usersHandler, extra = '' }: SetupOptions): Promise<Setup> {
  const primary = await startBackend(primaryHandler);
  const users = await startBackend(usersHandler ?? ((req, res) => json(res, 200, { at: req.url })));
  const yaml = `
routes:
  - { method: GET, route: "/item/{key}", service: ${primary.host}, path: "/item/{key}",
      mapping: [{ path: "/users/{key}", service: ${users.host}, tag: user }] }
  - { method: GET, route: "/list/{n}", service: ${primary.host}, path: "/list/{n}",
      mapping: [{ path: "/users/{key}", service: ${users.host}, tag: user }] }
config:
  mappingCache:
${cache}
${extra}
`;
  const clock = createManualClock();
  const gw = await startGateway(yaml, process.env, { now: clock.now });
  return {
    gw,
    clock,
    primary,
    users,
    yaml,
    calls: (path) => users.seen.filter((s) => s.url === path).length,
    async item(key) {
      const res = await request(`${gw.url}/api/item/${key}`);
      assert.equal(res.statusCode, 200);
      return ((await res.body.json()) as { user?: unknown }).user;
    },
  };
}

/** Runs `test` on its own gateway and services, closed afterwards whatever happens. */
async function withSetup(options: SetupOptions, test: (s: Setup) => Promise<void>): Promise<void> {
  let s: Setup | undefined;
  try {
    s = await setup(options);
    await test(s);
  } finally {
    await closeAll(s?.gw, s?.primary, s?.users);
  }
}

/** The cache's counters: those given, the others zero. */
const stats = (counts: Partial<MappingCacheStats>): MappingCacheStats => ({
  hits: 0,
  misses: 0,
  sharedHits: 0,
  coalesced: 0,
  evictions: 0,
  expirations: 0,
  size: 0,
  ...counts,
});

const ENABLED = `    enabled: true
    ttlSec: 60
    maxSize: 100`;

describe('mapping cache', () => {
  it('a second client request for the same URL is served from the cache', async () => {
    await withSetup({ cache: ENABLED }, async (s) => {
      assert.deepEqual(await s.item('A'), { at: '/users/A' });
      assert.deepEqual(await s.item('A'), { at: '/users/A' });
      assert.deepEqual(await s.item('A'), { at: '/users/A' });
      assert.equal(s.calls('/users/A'), 1);
      assert.deepEqual(s.gw.gateway.mappingCache.stats(), stats({ hits: 2, misses: 1, size: 1 }));
    });
  });

  it('with the cache off every client request calls again', async () => {
    await withSetup({ cache: '    enabled: false' }, async (s) => {
      await s.item('A');
      await s.item('A');
      assert.equal(s.calls('/users/A'), 2);
      assert.equal(s.gw.gateway.mappingCache.stats().hits, 0);
    });
  });

  it('within one response one URL is fetched once with the cache on too: 100 items over 5 values -> 5 calls', async () => {
    await withSetup({ cache: ENABLED }, async (s) => {
      const res = await request(`${s.gw.url}/api/list/100`);
      const items = (await res.body.json()) as { i: number; user: { at: string } }[];
      assert.equal(items.length, 100);
      for (const it of items) assert.deepEqual(it.user, { at: `/users/k${it.i % 5}` });
      assert.equal(s.users.seen.length, 5);
      const again = await request(`${s.gw.url}/api/list/100`);
      await again.body.dump();
      assert.equal(s.users.seen.length, 5, 'second response entirely from the cache');
      assert.deepEqual(s.gw.gateway.mappingCache.stats(), stats({ hits: 5, misses: 5, size: 5 }));
    });
  });

  it('entries expire after ttlSec', async () => {
    await withSetup(
      {
        cache: `    enabled: true
    ttlSec: 0.3`,
      },
      async (s) => {
        await s.item('A');
        s.clock.advance(299);
        await s.item('A');
        assert.equal(s.calls('/users/A'), 1, 'still cached just before ttlSec');
        s.clock.advance(2);
        await s.item('A');
        assert.equal(s.calls('/users/A'), 2);
        await s.item('A');
        assert.equal(s.calls('/users/A'), 2);
        assert.equal(s.gw.gateway.mappingCache.stats().expirations, 1);
      },
    );
  });

  it('maxSize evicts the least recently used entry, not the oldest inserted', async () => {
    await withSetup(
      {
        cache: `    enabled: true
    maxSize: 2`,
      },
      async (s) => {
        await s.item('A');
        await s.item('B');
        await s.item('A'); // touch A: B is now the least recently used
        await s.item('C'); // evicts B (FIFO would evict A)
        assert.equal(s.gw.gateway.mappingCache.stats().evictions, 1);
        await s.item('A');
        assert.equal(s.calls('/users/A'), 1, 'A stayed cached');
        await s.item('B');
        assert.equal(s.calls('/users/B'), 2, 'B was evicted');
        assert.equal(s.calls('/users/C'), 1);
        assert.deepEqual(s.gw.gateway.mappingCache.stats(), stats({ hits: 2, misses: 4, evictions: 2, size: 2 }));
      },
    );
  });

  it('failures are not cached: the next request calls again, and its success is cached', async () => {
    let n = 0;
    await withSetup(
      {
        cache: ENABLED,
        usersHandler: (req, res) =>
          ++n === 1 ? json(res, 503, { error: 'down' }) : json(res, 200, { at: req.url, n }),
      },
      async (s) => {
        assert.equal(await s.item('F'), undefined);
        assert.deepEqual(await s.item('F'), { at: '/users/F', n: 2 });
        assert.deepEqual(await s.item('F'), { at: '/users/F', n: 2 });
        assert.equal(s.calls('/users/F'), 2);
        assert.deepEqual(s.gw.gateway.mappingCache.stats(), stats({ hits: 1, misses: 2, size: 1 }));
      },
    );
  });

  it('two concurrent client requests for one URL share one call', async () => {
    const held: (() => void)[] = [];
    await withSetup(
      { cache: ENABLED, usersHandler: (req, res) => held.push(() => json(res, 200, { at: req.url })) },
      async (s) => {
        const answers = Promise.all([s.item('S'), s.item('S')]);
        const cache = s.gw.gateway.mappingCache;
        // The call is answered only once it reached the users service and the second client request joined it.
        await waitFor(() => held.length === 1 && cache.stats().coalesced === 1, 5_000, 'the second request joining');
        for (const answer of held) answer();
        const [a, b] = await answers;
        assert.deepEqual(a, { at: '/users/S' });
        assert.deepEqual(b, { at: '/users/S' });
        assert.equal(s.calls('/users/S'), 1);
        assert.deepEqual(s.gw.gateway.mappingCache.stats(), stats({ misses: 1, coalesced: 1, size: 1 }));
      },
    );
  });

  it('a failed shared call fails every waiter, and is not cached', async () => {
    const held: (() => void)[] = [];
    let holding = true;
    const usersHandler = (_req: IncomingMessage, res: ServerResponse) => {
      const fail = () => json(res, 500, { error: 'boom' });
      if (holding) held.push(fail);
      else fail();
    };
    await withSetup({ cache: ENABLED, usersHandler }, async (s) => {
      const answers = Promise.all([s.item('S'), s.item('S')]);
      const cache = s.gw.gateway.mappingCache;
      // The call fails only once it reached the users service and the second client request joined it.
      await waitFor(() => held.length === 1 && cache.stats().coalesced === 1, 5_000, 'the second request joining');
      holding = false;
      for (const answer of held) answer();
      const [a, b] = await answers;
      assert.equal(a, undefined);
      assert.equal(b, undefined);
      assert.equal(s.calls('/users/S'), 1);
      // Both client requests failed alike: the first writes its warning, the second is counted
      // for the window's summary line (identical warnings are rate-limited).
      assert.equal(s.gw.logs.filter((l) => l.msg === 'mapping failed' && l.reason === 'status 500').length, 1);
      assert.equal(await s.item('S'), undefined);
      assert.equal(s.calls('/users/S'), 2);
    });
  });

  it('cached entries survive a configuration reload', async () => {
    await withSetup({ cache: ENABLED }, async (s) => {
      await s.item('A');
      s.gw.reload(s.yaml.replace('maxSize: 100', 'maxSize: 50'));
      await s.item('A');
      s.gw.reload(s.yaml);
      await s.item('A');
      assert.equal(s.calls('/users/A'), 1);
      assert.equal(s.gw.gateway.mappingCache.stats().hits, 2);
    });
  });

  it('while a mapping origin circuit is open, its rule is skipped without a call', async () => {
    await withSetup(
      {
        cache: '    enabled: false',
        usersHandler: (_req, res) => json(res, 500, { error: 'boom' }),
        extra: `  circuitBreaker:
    enabled: true
    maxFailures: 2
    timeoutSec: 60`,
      },
      async (s) => {
        assert.equal(await s.item('X'), undefined);
        assert.equal(await s.item('Y'), undefined);
        assert.equal(s.users.seen.length, 2);
        // The circuit of the users origin is now open: no call, a warning, the primary still 200.
        assert.equal(await s.item('Z'), undefined);
        assert.equal(s.users.seen.length, 2);
        const last = s.gw.logs.filter((l) => l.msg === 'mapping failed').at(-1);
        assert.equal(last?.reason, 'circuit open');
        assert.equal(last?.url, `${s.users.url}/users/Z`);
      },
    );
  });
});
