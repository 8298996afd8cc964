import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import { configureWriteTimeout } from './write-timeout.js';

/** The fields of a socket the watch reads: bytes handed to it, bytes still buffered. */
class FakeSocket extends EventEmitter {
  bytesWritten = 0;
  writableLength = 0;
  destroyed = false;
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
  /** `n` more bytes written by the gateway, `taken` of the buffered ones taken by the client. */
  write(n: number, taken = 0): void {
    this.bytesWritten += n;
    this.writableLength += n - taken;
  }
}

const LIMIT_MS = 1_000;
const TICK_MS = LIMIT_MS / 4;

describe('write-stall limit', () => {
  let clock = 0;
  let server: Server;
  beforeEach(() => {
    mock.timers.enable({ apis: ['setInterval'] });
    clock = 0;
    server = new EventEmitter() as unknown as Server;
    configureWriteTimeout(server, LIMIT_MS, () => clock);
  });
  afterEach(() => {
    server.emit('close');
    mock.timers.reset();
  });
  const advance = (ms: number) => {
    for (let t = 0; t < ms; t += TICK_MS) {
      clock += TICK_MS;
      mock.timers.tick(TICK_MS);
    }
  };
  const connect = () => {
    const s = new FakeSocket();
    server.emit('connection', s);
    return s;
  };

  it('cuts a connection whose waiting bytes nobody takes for the limit, not before', () => {
    const s = connect();
    s.write(10_000);
    advance(LIMIT_MS);
    assert.equal(s.destroyed, false);
    advance(2 * TICK_MS);
    assert.equal(s.destroyed, true);
  });

  it('never cuts a connection with nothing waiting (an idle stream)', () => {
    const s = connect();
    advance(10 * LIMIT_MS);
    assert.equal(s.destroyed, false);
  });

  it('never cuts a client that keeps taking bytes, however slowly', () => {
    const s = connect();
    s.write(10_000);
    for (let i = 0; i < 40; i++) {
      s.write(0, 1);
      advance(TICK_MS);
    }
    assert.equal(s.destroyed, false);
  });

  it('a limit of 0 on reload stops the watch; a new limit applies to new connections', () => {
    const before = connect();
    before.write(10_000);
    configureWriteTimeout(server, 0, () => clock);
    advance(5 * LIMIT_MS);
    assert.equal(before.destroyed, false);
    configureWriteTimeout(server, LIMIT_MS, () => clock);
    const after = connect();
    after.write(10_000);
    advance(LIMIT_MS + 2 * TICK_MS);
    assert.equal(after.destroyed, true);
  });
});
