import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createOpenStreams } from './open-streams.js';

describe('open streams', () => {
  it('ends every registered stream once on endAll, not the unregistered ones', () => {
    const streams = createOpenStreams();
    const ended: string[] = [];
    streams.add(() => ended.push('a'));
    const removeB = streams.add(() => ended.push('b'));
    streams.add(() => ended.push('c'));
    removeB();
    assert.equal(streams.size, 2);
    streams.endAll();
    assert.deepEqual(ended, ['a', 'c']);
    assert.equal(streams.size, 0);
    streams.endAll();
    assert.deepEqual(ended, ['a', 'c']);
  });

  it('ends a stream registered after endAll on the next microtask, not inside add', async () => {
    const streams = createOpenStreams();
    streams.endAll();
    let ended = 0;
    streams.add(() => ended++);
    assert.equal(ended, 0);
    await Promise.resolve();
    assert.equal(ended, 1);
    assert.equal(streams.size, 0);
  });

  it('tracks a stream without an unregister function: remove takes it off, endAll ends the rest', async () => {
    const streams = createOpenStreams();
    const ended: string[] = [];
    const a = () => ended.push('a');
    const b = () => ended.push('b');
    streams.track(a);
    streams.track(b);
    streams.remove(a);
    assert.equal(streams.size, 1);
    streams.endAll();
    assert.deepEqual(ended, ['b']);
    streams.track(() => ended.push('late'));
    await Promise.resolve();
    assert.deepEqual(ended, ['b', 'late']);
  });

  it('tracks an object by its endStream method: no closure per stream (an open tunnel)', () => {
    const streams = createOpenStreams();
    const ended: string[] = [];
    const tunnel = {
      name: 't',
      endStream() {
        ended.push(this.name);
      },
    };
    const other = {
      name: 'u',
      endStream() {
        ended.push(this.name);
      },
    };
    streams.track(tunnel);
    streams.track(other);
    streams.remove(other);
    streams.endAll();
    assert.deepEqual(ended, ['t']);
  });
});
