import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { GOING_AWAY_FRAME, GoingAway } from './going-away.js';

/** An unmasked server frame: FIN + opcode, then a 7- or 16-bit payload length. */
function frame(opcode: number, payload: Buffer): Buffer {
  const n = payload.length;
  const len = n < 126 ? Buffer.from([n]) : Buffer.from([126, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([0x80 | opcode]), len, payload]);
}

describe('GoingAway', () => {
  const collect = (s: PassThrough) => {
    const got: Buffer[] = [];
    s.on('data', (c: Buffer) => got.push(c));
    return () => Buffer.concat(got);
  };

  it('between frames: the close frame goes at once and later backend frames are dropped', async () => {
    const client = new PassThrough();
    const backend = new PassThrough();
    const received = collect(client);
    backend.pipe(client);
    const goAway = new GoingAway(client, backend, Buffer.alloc(0));
    const before = frame(1, Buffer.from('before'));
    backend.write(before);
    await new Promise((r) => setImmediate(r));
    goAway.endStream();
    backend.write(frame(1, Buffer.from('after')));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(received(), Buffer.concat([before, GOING_AWAY_FRAME]));
  });

  it('inside a frame: the rest of that frame goes first, then the close frame', async () => {
    const client = new PassThrough();
    const backend = new PassThrough();
    const received = collect(client);
    backend.pipe(client);
    const big = frame(2, Buffer.alloc(1_000, 7));
    const head = frame(1, Buffer.from('sent with the 101'));
    const goAway = new GoingAway(client, backend, head);
    backend.write(big.subarray(0, 100));
    await new Promise((r) => setImmediate(r));
    goAway.endStream();
    backend.write(Buffer.concat([big.subarray(100), frame(1, Buffer.from('dropped'))]));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(received(), Buffer.concat([big, GOING_AWAY_FRAME]));
  });

  it('follows the backend with one listener shared by every tunnel, and sends one close frame', async () => {
    const pairs = [0, 1].map(() => ({ client: new PassThrough(), backend: new PassThrough() }));
    const goAways = pairs.map(({ client, backend }) => {
      backend.pipe(client);
      return new GoingAway(client, backend, Buffer.alloc(0));
    });
    const [first, second] = pairs.map(({ backend }) => backend.listeners('data'));
    assert.equal(first![1], second![1], 'the frame follower is one function');
    const received = collect(pairs[0]!.client);
    goAways[0]!.endStream();
    goAways[0]!.endStream();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(received(), GOING_AWAY_FRAME);
  });
});
