import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Duplex } from 'node:stream';
import { tunnel } from './tunnel.js';
import { closeAtExpiry } from './tunnel-expiry.js';
import { closeFrame } from './frame-boundary.js';
import { socketPair } from '../../test/support/socket-pair.js';

const EXPIRED = closeFrame(1008, 'token expired');

/** client <-> [gwClient  tunnel, expiring in `inMs`  gwBackend] <-> backend, on mocked timers. */
function setup(t: TestContext, inMs: number) {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const [client, gwClient] = socketPair();
  const [gwBackend, backend] = socketPair();
  const received: Buffer[] = [];
  client.on('data', (c: Buffer) => received.push(c));
  let expired = 0;
  let closed = 0;
  tunnel(gwClient, gwBackend, () => closed++);
  closeAtExpiry(gwClient, gwBackend, { inMs, relayed: Buffer.alloc(0), graceMs: 10_000, onExpire: () => expired++ });
  return {
    client,
    backend,
    gwClient,
    gwBackend,
    received: () => Buffer.concat(received),
    expired: () => expired,
    closed: () => closed,
  };
}

/** Lets the in-memory streams deliver what was written (they use ticks, not timers). */
const settle = () => new Promise<void>((r) => setImmediate(r));

/** A server frame of `payload`. */
const frame = (payload: string) => Buffer.concat([Buffer.from([0x81, payload.length]), Buffer.from(payload)]);

async function ended(s: Duplex): Promise<void> {
  if (!s.readableEnded) await once(s, 'end');
}

describe('closeAtExpiry', () => {
  it('at expiry between two frames: the client gets the close frame 1008 and a FIN, the backend side closes', async (t) => {
    const x = setup(t, 5_000);
    x.backend.write(frame('hello'));
    await settle();
    t.mock.timers.tick(4_999);
    assert.equal(x.expired(), 0);
    t.mock.timers.tick(1);
    await ended(x.client);
    assert.deepEqual(x.received(), Buffer.concat([frame('hello'), EXPIRED]));
    assert.equal(x.expired(), 1);
    assert.ok(x.gwBackend.destroyed);
  });

  it('mid-frame: the rest of that frame goes first, then the close frame; nothing after it', async (t) => {
    const x = setup(t, 1_000);
    const whole = frame('a frame cut in two');
    x.backend.write(whole.subarray(0, 6));
    await settle();
    t.mock.timers.tick(1_000);
    await settle();
    assert.equal(x.expired(), 1);
    assert.deepEqual(x.received(), whole.subarray(0, 6), 'no close frame inside the payload');
    x.backend.write(Buffer.concat([whole.subarray(6), frame('after expiry')]));
    await ended(x.client);
    assert.deepEqual(x.received(), Buffer.concat([whole, EXPIRED]));
  });

  it('the client bytes stop reaching the backend at expiry', async (t) => {
    const x = setup(t, 1_000);
    const seen: Buffer[] = [];
    x.backend.on('data', (c: Buffer) => seen.push(c));
    t.mock.timers.tick(1_000);
    x.client.write('after expiry');
    await ended(x.client);
    assert.deepEqual(seen, []);
  });

  it('a tunnel closed before expiry never expires', async (t) => {
    const x = setup(t, 1_000);
    const gone = once(x.gwClient, 'close');
    x.gwBackend.destroy();
    await gone;
    assert.equal(x.closed(), 1);
    t.mock.timers.tick(1_000);
    assert.equal(x.expired(), 0);
  });

  it('a token already expired closes the tunnel at once', async (t) => {
    const x = setup(t, -5_000);
    t.mock.timers.tick(0);
    await ended(x.client);
    assert.deepEqual(x.received(), EXPIRED);
  });
});
