import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Duplex } from 'node:stream';
import { once } from 'node:events';
import { tunnel, type TunnelEnd } from './tunnel.js';
import { socketPair } from '../../test/support/socket-pair.js';

/** client <-> [gwClient  tunnel  gwBackend] <-> backend */
function setup() {
  const [client, gwClient] = socketPair();
  const [gwBackend, backend] = socketPair();
  let closes = 0;
  tunnel(gwClient, gwBackend, () => closes++);
  return { client, gwClient, gwBackend, backend, closes: () => closes };
}

async function read(s: Duplex): Promise<string> {
  const [chunk] = (await once(s, 'data')) as [Buffer];
  return chunk.toString('utf8');
}

describe('tunnel', () => {
  it('relays bytes both ways unchanged', async () => {
    const t = setup();
    t.client.write('from client');
    assert.equal(await read(t.backend), 'from client');
    t.backend.write(Buffer.from([0, 255, 1]));
    const [chunk] = (await once(t.client, 'data')) as [Buffer];
    assert.deepEqual(chunk, Buffer.from([0, 255, 1]));
  });

  it('ends the other side when one side ends (FIN), after relaying what came before it', async () => {
    const t = setup();
    const got: string[] = [];
    t.client.on('data', (c: Buffer) => got.push(c.toString('utf8')));
    t.backend.end('last words');
    await once(t.client, 'end');
    assert.deepEqual(got, ['last words']);
  });

  it('destroys the other side at once when one side errors', async () => {
    const t = setup();
    t.gwBackend.destroy(new Error('ECONNRESET'));
    await once(t.gwClient, 'close');
    assert.equal(t.gwClient.destroyed, true);
    assert.equal(t.closes(), 1);
  });

  it('closes the other side, after flushing it, when one side closes cleanly', async () => {
    const t = setup();
    t.client.resume();
    t.gwBackend.destroy();
    await once(t.gwClient, 'close');
    assert.equal(t.gwClient.writableFinished, true, 'ended (flushed) before being destroyed');
    assert.equal(t.closes(), 1);
  });

  it('destroys the other side at once when one side goes while the other does not read (no wait on a full buffer)', async () => {
    const { gwClient, gwBackend, ended } = stuckBackend();
    await fill(gwClient);
    assert.equal(gwBackend.writableNeedDrain, true, 'the backend side holds a full buffer');
    gwClient.destroy(); // the client left
    assert.equal(await bounded(ended, 1_000), 'closed');
    assert.equal(gwBackend.destroyed, true);
  });

  it('destroys both sides when one side keeps a full buffer for stallMs', async () => {
    const stallMs = 60;
    const { gwClient, gwBackend, ended } = stuckBackend({ stallMs });
    const started = performance.now();
    await fill(gwClient);
    assert.equal(await bounded(ended, 1_000), 'b-stalled');
    assert.ok(performance.now() - started >= stallMs - 1, 'not before stallMs');
    assert.equal(gwClient.destroyed && gwBackend.destroyed, true);
  });

  it('leaves an idle tunnel open past stallMs (only a blocked direction is timed)', async () => {
    const stallMs = 20;
    const { gwClient, gwBackend } = stuckBackend({ stallMs });
    gwClient.push(Buffer.alloc(100)); // below the high-water mark: nothing waits
    await new Promise((r) => setTimeout(r, stallMs * 5));
    assert.equal(gwClient.destroyed || gwBackend.destroyed, false);
    gwClient.destroy();
  });

  it('destroys both sides closeGraceMs after one side ends when the other never ends', async () => {
    const closeGraceMs = 40;
    const [client, gwClient] = socketPair();
    const [gwBackend] = socketPair();
    const ended = keptAlive(
      new Promise<TunnelEnd>((resolve) => tunnel(gwClient, gwBackend, resolve, { closeGraceMs })),
    );
    client.resume();
    const started = performance.now();
    gwBackend.push(null); // the backend's FIN; the client never ends its side
    assert.equal(await bounded(ended, 1_000), 'closed');
    assert.ok(performance.now() - started >= closeGraceMs - 1, 'the other direction had its grace period');
  });
});

/** Rejects when `p` has not settled within `ms` (far below the tunnel's own grace periods). */
function bounded<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** A tunnel whose backend side accepts writes but never completes them (a backend not reading). */
function stuckBackend(options: { stallMs?: number } = {}) {
  const [, gwClient] = socketPair();
  const gwBackend = new Duplex({
    read() {},
    write() {
      /* never calls back: the peer does not read */
    },
  });
  return {
    gwClient,
    gwBackend,
    ended: keptAlive(new Promise<TunnelEnd>((resolve) => tunnel(gwClient, gwBackend, resolve, options))),
  };
}

/** The tunnel's timers do not hold the process open (a server does): the test holds it until `p` settles. */
function keptAlive<T>(p: Promise<T>): Promise<T> {
  const timer = setInterval(() => {}, 1_000);
  return p.finally(() => clearInterval(timer));
}

/** Pushes bytes into `s` as if its peer sent them until the tunnel pauses it (the other side is full). */
async function fill(s: Duplex): Promise<void> {
  const paused = once(s, 'pause');
  for (let i = 0; i < 8; i++) s.push(Buffer.alloc(16 * 1024, i));
  await paused;
}
