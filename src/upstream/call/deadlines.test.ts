import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DeadlineSweep, MAX_PERIOD_MS, MIN_PERIOD_MS, sweepPeriodFor, type Watched } from './deadlines.js';

/** A watched call that records when the sweep found it overdue. */
function watched(deadlineAt: number): Watched & { seen: number[] } {
  const seen: number[] = [];
  return {
    deadlineAt,
    seen,
    overdue(now) {
      seen.push(now);
    },
    sweepPrev: undefined,
    sweepNext: undefined,
    sweepBy: undefined,
  };
}

describe('call deadlines', () => {
  it('checks a wait a tenth of it apart, within 5 ms and 250 ms', () => {
    assert.equal(sweepPeriodFor(1_000), 100);
    assert.equal(sweepPeriodFor(30_000), MAX_PERIOD_MS);
    assert.equal(sweepPeriodFor(20), MIN_PERIOD_MS);
  });

  it('calls overdue at or after a deadline, never before, until unwatched', () => {
    let clock = 0;
    const sweep = new DeadlineSweep(() => clock);
    const early = watched(100);
    const late = watched(1_000);
    sweep.watch(early, 100);
    sweep.watch(late, 1_000);
    clock = 99;
    sweep.check();
    assert.deepEqual([early.seen, late.seen], [[], []]);
    clock = 100;
    sweep.check();
    assert.deepEqual([early.seen, late.seen], [[100], []]);
    sweep.unwatch(early);
    clock = 1_000;
    sweep.check();
    assert.deepEqual([early.seen, late.seen], [[100], [1_000]]);
    sweep.unwatch(late);
    assert.equal(sweep.size, 0);
  });

  it('sweeps on an interval while something is watched, and stops when nothing is', (ctx) => {
    ctx.mock.timers.enable({ apis: ['setInterval'] });
    let clock = 0;
    const sweep = new DeadlineSweep(() => clock);
    const w = watched(1_000);
    // A wait of 1 s is checked every 100 ms.
    sweep.watch(w, 1_000);
    clock = 1_000;
    ctx.mock.timers.tick(99);
    assert.deepEqual(w.seen, []);
    ctx.mock.timers.tick(1);
    assert.deepEqual(w.seen, [1_000]);
    // A shorter wait watched later makes the sweeps more frequent: 50 ms for 500 ms.
    const short = watched(1_050);
    sweep.watch(short, 500);
    clock = 1_050;
    ctx.mock.timers.tick(50);
    assert.deepEqual(short.seen, [1_050]);
    sweep.unwatch(w);
    sweep.unwatch(short);
    assert.equal(sweep.sweeping, true);
    sweep.check(); // finds nothing watched: the interval stops
    assert.equal(sweep.sweeping, false);
    sweep.watch(watched(0), 30_000);
    assert.equal(sweep.sweeping, true);
  });

  it('watches a call once however often it is watched, and forgets it from any place in the list', () => {
    let clock = 0;
    const sweep = new DeadlineSweep(() => clock);
    const [a, b, c] = [watched(10), watched(10), watched(10)];
    for (const w of [a, b, c, a]) sweep.watch(w, 100);
    assert.equal(sweep.size, 3);
    sweep.unwatch(b);
    sweep.unwatch(b);
    new DeadlineSweep().unwatch(a); // another sweep's call: left alone
    assert.equal(sweep.size, 2);
    clock = 10;
    sweep.check();
    assert.deepEqual([a.seen, b.seen, c.seen], [[10], [], [10]]);
    sweep.unwatch(a);
    sweep.unwatch(c);
    assert.equal(sweep.size, 0);
    sweep.watch(b, 100);
    sweep.check();
    assert.deepEqual(b.seen, [10], 'a call watched again after the list emptied');
  });

  it('lets an overdue call unwatch itself during the sweep', () => {
    const sweep = new DeadlineSweep(() => 10);
    const calls: Watched[] = [];
    for (let i = 0; i < 3; i++) {
      const w: Watched = {
        deadlineAt: 0,
        overdue: () => {
          sweep.unwatch(w);
          calls.push(w);
        },
        sweepPrev: undefined,
        sweepNext: undefined,
        sweepBy: undefined,
      };
      sweep.watch(w, 100);
    }
    sweep.check();
    assert.equal(calls.length, 3);
    assert.equal(sweep.size, 0);
  });
});
