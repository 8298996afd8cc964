import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { PARENT_POLL_MS, parentOf, startedByNpm, stopWhenOrphaned } from './parent-watch.js';

describe('stopWhenOrphaned', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setInterval'] }));
  afterEach(() => mock.timers.reset());

  it('stops once the parent is gone, within one poll, and only once', () => {
    let ids = [4242, 4000];
    const reasons: string[] = [];
    stopWhenOrphaned((reason) => reasons.push(reason), { lineage: () => ids });
    mock.timers.tick(PARENT_POLL_MS * 10);
    assert.deepEqual(reasons, [], 'the parents are still there');
    ids = [1, 0];
    mock.timers.tick(PARENT_POLL_MS);
    assert.deepEqual(reasons, ['parent exited']);
    ids = [7, 0];
    mock.timers.tick(PARENT_POLL_MS * 10);
    assert.deepEqual(reasons, ['parent exited'], 'the watch ended with the first stop');
  });

  it('stops when the grandparent goes though the parent stays (npm killed, its shell left waiting)', () => {
    let ids = [4242, 4000];
    const reasons: string[] = [];
    stopWhenOrphaned((reason) => reasons.push(reason), { lineage: () => ids });
    ids = [4242, 1];
    mock.timers.tick(PARENT_POLL_MS);
    assert.deepEqual(reasons, ['parent exited']);
  });

  it('a grandparent it could not read at start is not watched', () => {
    let ids: (number | undefined)[] = [4242, undefined];
    const reasons: string[] = [];
    stopWhenOrphaned((reason) => reasons.push(reason), { lineage: () => ids });
    ids = [4242, 1];
    mock.timers.tick(PARENT_POLL_MS * 10);
    assert.deepEqual(reasons, []);
  });

  it('ends when its disposer is called', () => {
    let ids = [4242, 4000];
    const reasons: string[] = [];
    const end = stopWhenOrphaned((reason) => reasons.push(reason), { lineage: () => ids });
    end();
    ids = [1, 0];
    mock.timers.tick(PARENT_POLL_MS * 10);
    assert.deepEqual(reasons, []);
  });
});

describe('parentOf', () => {
  it('reads the parent id from /proc', () => {
    assert.equal(parentOf(process.pid), process.ppid);
    assert.equal(parentOf(-1), undefined);
  });
});

describe('startedByNpm', () => {
  it('is true under npm start, npm run and npx, false otherwise', () => {
    assert.equal(startedByNpm({ npm_lifecycle_event: 'start' }), true);
    assert.equal(startedByNpm({ npm_lifecycle_event: 'npx' }), true);
    assert.equal(startedByNpm({}), false);
    assert.equal(startedByNpm({ npm_lifecycle_event: '' }), false);
  });
});
