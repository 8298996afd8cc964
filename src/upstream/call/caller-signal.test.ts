import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CallerLeft } from './caller-signal.js';

describe('CallerLeft', () => {
  it('runs each listener once, in the order added, and none removed or added after leave()', () => {
    const left = new CallerLeft();
    const ran: string[] = [];
    const a = () => ran.push('a');
    const b = () => ran.push('b');
    const c = () => ran.push('c');
    left.addEventListener('abort', a, { once: true });
    left.addEventListener('abort', b);
    left.addEventListener('abort', c);
    left.removeEventListener('abort', b);
    assert.equal(left.aborted, false);
    left.leave();
    left.leave();
    left.addEventListener('abort', b);
    assert.equal(left.aborted, true);
    assert.deepEqual(ran, ['a', 'c']);
  });
});
