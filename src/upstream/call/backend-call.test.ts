import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { callEnded } from './pool-count.js';
import { callStarted } from './pool-use.js';
import type { BackendPool, Upstream } from '../types.js';

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
