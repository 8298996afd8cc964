import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { grpcTimeoutMs } from './grpc.js';

describe('grpc-timeout', () => {
  it('reads every unit', () => {
    assert.equal(grpcTimeoutMs('2H'), 7_200_000);
    assert.equal(grpcTimeoutMs('3M'), 180_000);
    assert.equal(grpcTimeoutMs('5S'), 5_000);
    assert.equal(grpcTimeoutMs('250m'), 250);
    assert.equal(grpcTimeoutMs('1500u'), 1.5);
    assert.equal(grpcTimeoutMs('99999999n'), 99.999999);
  });

  it("ignores an absent or malformed value (no deadline but the route's)", () => {
    for (const v of [undefined, '', '10', 'S', '123456789S', '1.5S', '10s', ' 5S', ['1S', '2S']])
      assert.equal(grpcTimeoutMs(v), undefined, String(v));
  });
});
