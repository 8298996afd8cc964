import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { limitRepeats, type Repeats } from './repeat-limit.js';

interface Ev {
  readonly id: number;
  readonly items: number;
}

function setup(options: { windowMs?: number; maxKeys?: number } = {}) {
  const written: { id: number; repeats: Repeats | undefined }[] = [];
  const limit = limitRepeats<Ev>({
    write: (e, repeats) => written.push({ id: e.id, repeats }),
    items: (e) => e.items,
    windowMs: 1_000,
    ...options,
  });
  return { written, limit };
}

describe('limitRepeats', () => {
  it('writes the first line of a key, counts identical ones in the window, writes one summary when it closes', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { written, limit } = setup();
    for (let i = 0; i < 1_000; i++) limit('route|tag|circuit open', { id: i, items: 50 });
    assert.deepEqual(written, [{ id: 0, repeats: undefined }]);
    t.mock.timers.tick(1_000);
    assert.deepEqual(written, [
      { id: 0, repeats: undefined },
      { id: 999, repeats: { lines: 999, items: 999 * 50 } },
    ]);
  });

  it('a lasting outage writes one line per window; a quiet window forgets the key', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { written, limit } = setup();
    limit('k', { id: 1, items: 1 });
    for (let w = 0; w < 3; w++) {
      limit('k', { id: 10 + w, items: 1 });
      limit('k', { id: 20 + w, items: 1 });
      t.mock.timers.tick(1_000);
    }
    assert.deepEqual(
      written.map((l) => l.repeats?.lines),
      [undefined, 2, 2, 2],
    );
    t.mock.timers.tick(1_000); // a window without repeats
    limit('k', { id: 99, items: 1 });
    assert.deepEqual(written.at(-1), { id: 99, repeats: undefined }, 'written at once again after the outage');
  });

  it('keeps keys apart', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { written, limit } = setup();
    limit('a', { id: 1, items: 0 });
    limit('b', { id: 2, items: 0 });
    limit('a', { id: 3, items: 0 });
    assert.deepEqual(
      written.map((l) => l.id),
      [1, 2],
    );
  });

  it('past maxKeys, writes lines as they come (bounded memory, nothing lost)', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { written, limit } = setup({ maxKeys: 2 });
    limit('a', { id: 1, items: 0 });
    limit('b', { id: 2, items: 0 });
    limit('c', { id: 3, items: 0 });
    limit('c', { id: 4, items: 0 });
    assert.deepEqual(
      written.map((l) => l.id),
      [1, 2, 3, 4],
    );
  });
});
