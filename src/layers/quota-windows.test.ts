import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createWindowClock, windowAt } from './quota-windows.js';

const at = (iso: string) => Date.parse(iso);

describe('quota windows (calendar, UTC)', () => {
  it('starts a minute, an hour and a day on their boundary', () => {
    const now = at('2026-03-31T23:59:30.500Z');
    assert.deepEqual(windowAt('minute', now), { start: at('2026-03-31T23:59:00Z'), end: at('2026-04-01T00:00:00Z') });
    assert.deepEqual(windowAt('hour', now), { start: at('2026-03-31T23:00:00Z'), end: at('2026-04-01T00:00:00Z') });
    assert.deepEqual(windowAt('day', now), { start: at('2026-03-31T00:00:00Z'), end: at('2026-04-01T00:00:00Z') });
  });

  it('gives a month its own length: February of a leap year, December into January', () => {
    const feb = windowAt('month', at('2028-02-10T12:00:00Z'));
    assert.deepEqual(feb, { start: at('2028-02-01T00:00:00Z'), end: at('2028-03-01T00:00:00Z') });
    assert.equal((feb.end - feb.start) / 86_400_000, 29);
    const dec = windowAt('month', at('2026-12-31T23:59:59.999Z'));
    assert.deepEqual(dec, { start: at('2026-12-01T00:00:00Z'), end: at('2027-01-01T00:00:00Z') });
  });

  it('a window ends where the next starts', () => {
    const end = windowAt('day', at('2026-05-05T10:00:00Z')).end;
    assert.equal(windowAt('day', end).start, end);
  });

  it('the window clock follows the clock across a boundary, and back', () => {
    const clock = createWindowClock();
    const first = clock.bounds('minute', at('2026-01-01T00:00:59.999Z'));
    assert.equal(first.start, at('2026-01-01T00:00:00Z'));
    assert.equal(clock.bounds('minute', at('2026-01-01T00:00:10Z')), first, 'the same window is reused');
    assert.equal(clock.bounds('minute', at('2026-01-01T00:01:00Z')).start, at('2026-01-01T00:01:00Z'));
    assert.equal(clock.bounds('minute', at('2026-01-01T00:00:30Z')).start, first.start);
  });
});
