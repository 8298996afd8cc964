import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { callEnded } from './pool-count.js';
import { callStarted } from './pool-use.js';
import { dropWholeBodyHeaders } from './route-call.js';
import { requestDropSet } from '../headers/forward-headers.js';
import type { BackendPool, Upstream } from '../types.js';

describe('dropWholeBodyHeaders', () => {
  it("adds accept-encoding, range and if-range to the pipeline's drop set (made once per route), leaving that set as it was", () => {
    const base = requestDropSet(['x-userid']);
    const drop = dropWholeBodyHeaders(base);
    for (const name of ['accept-encoding', 'range', 'if-range']) {
      assert.equal(drop.has(name), true, name);
      assert.equal(base.has(name), false, name);
    }
    assert.equal(drop.has('x-userid'), true);
    assert.equal(drop.size, base.size + 3);
  });

  it('keeps the trust in proxies: their X-Forwarded-For still passes on streams and mapped routes', () => {
    const drop = dropWholeBodyHeaders(requestDropSet([], true, (a) => a === '10.0.0.9'));
    assert.equal(drop.trustsPeer?.('10.0.0.9'), true);
    assert.equal(drop.trustsPeer?.('10.0.0.8'), false);
  });
});

describe('callStarted / callEnded', () => {
  it('count a call on the pool it goes out on: the bounded pool, or the stream pool', () => {
    const pool = { inFlight: 0, connections: 2 } as BackendPool;
    const streams = { inFlight: 0, connections: Infinity } as BackendPool;
    const upstream = { pick: () => pool, pickForStream: () => streams } as unknown as Upstream;
    const a = callStarted(upstream);
    const b = callStarted(upstream, true);
    assert.deepEqual([a, b], [pool, streams]);
    assert.deepEqual([pool.inFlight, streams.inFlight], [1, 1]);
    callEnded(a);
    callEnded(b);
    assert.deepEqual([pool.inFlight, streams.inFlight], [0, 0]);
  });
});
