import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Duplex } from 'node:stream';
import { once } from 'node:events';
import { tunnel } from './tunnel.js';

/** Two connected in-memory ends: what one writes, the other reads; end() is a FIN. */
function socketPair(): [Duplex, Duplex] {
  const ends: Duplex[] = [];
  const make = (peer: () => Duplex) =>
    new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        peer().push(chunk);
        cb();
      },
      final(cb) {
        peer().push(null);
        cb();
      },
    });
  ends.push(make(() => ends[1]!), make(() => ends[0]!));
  return [ends[0]!, ends[1]!];
}

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
});
