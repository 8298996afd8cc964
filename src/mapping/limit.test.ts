import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLimiter } from './limit.js';

/** A task that records its start and finishes when told to. */
function deferredTask(log: string[], name: string) {
  let finish: (v: string) => void = () => undefined;
  let fail: (e: Error) => void = () => undefined;
  const task = () => {
    log.push(`start ${name}`);
    return new Promise<string>((resolve, reject) => {
      finish = resolve;
      fail = reject;
    });
  };
  return { task, finish: (v = name) => finish(v), fail: (e: Error) => fail(e) };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('createLimiter', () => {
  it('runs at most max tasks at once and starts the others in arrival order', async () => {
    const log: string[] = [];
    const limiter = createLimiter(2);
    const tasks = ['a', 'b', 'c', 'd'].map((n) => deferredTask(log, n));
    const results = tasks.map((t) => limiter.run(t.task));
    await tick();
    assert.deepEqual(log, ['start a', 'start b']);
    tasks[1]!.finish();
    await tick();
    assert.deepEqual(log, ['start a', 'start b', 'start c']);
    tasks[0]!.finish();
    await tick();
    assert.deepEqual(log, ['start a', 'start b', 'start c', 'start d']);
    tasks[2]!.finish();
    tasks[3]!.finish();
    assert.deepEqual(await Promise.all(results), ['a', 'b', 'c', 'd']);
  });

  it('a failing or throwing task frees its slot and its caller sees the error', async () => {
    const log: string[] = [];
    const limiter = createLimiter(1);
    const a = deferredTask(log, 'a');
    const first = limiter.run(a.task);
    const thrown = limiter.run(() => {
      throw new Error('sync');
    });
    const b = deferredTask(log, 'b');
    const second = limiter.run(b.task);
    a.fail(new Error('boom'));
    await assert.rejects(first, /boom/);
    await assert.rejects(thrown, /sync/);
    await tick();
    assert.deepEqual(log, ['start a', 'start b']);
    b.finish();
    assert.equal(await second, 'b');
    // Idle again: a new task starts at once.
    const c = deferredTask(log, 'c');
    const third = limiter.run(c.task);
    assert.deepEqual(log, ['start a', 'start b', 'start c']);
    c.finish();
    assert.equal(await third, 'c');
  });
});
