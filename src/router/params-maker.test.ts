import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { paramsMaker } from './params-maker.js';

describe('params maker', () => {
  const path = '/api/users/a%2Fb/files/x.pdf';
  // `a%2Fb` at 11..16; `x.pdf`'s captures as a mixed segment would leave them.
  const starts = [11, -1, -1];
  const ends = [16, 0, 0];
  const captured = ['', 'x', 'pdf'];
  // The walk marks a segment holding a `.`, and every capture, as one that may be a dot-segment.
  const dotted = [0, 1, 1];

  it('makes a plain object of the route names, in path order', () => {
    const make = paramsMaker(['id', 'name', 'ext'], ['segment', 'capture', 'capture'], false);
    assert.deepEqual(make(path, starts, ends, captured, dotted, false, ''), { id: 'a%2Fb', name: 'x', ext: 'pdf' });
    assert.equal(Object.getPrototypeOf(make(path, starts, ends, captured, dotted, false, '')), Object.prototype);
  });

  it('decodes reserved escapes only when told, and adds the rest as `*` for a prefix route', () => {
    const make = paramsMaker(['id'], ['segment'], true);
    assert.deepEqual(make(path, starts, ends, captured, dotted, true, 'files/x.pdf'), {
      id: 'a/b',
      '*': 'files/x.pdf',
    });
    assert.deepEqual(make(path, starts, ends, captured, dotted, false, ''), { id: 'a%2Fb', '*': '' });
  });

  it('refuses a dot-segment value, from a segment or a capture', () => {
    const make = paramsMaker(['a', 'b'], ['segment', 'capture'], false);
    assert.equal(make('/x/../y', [3], [5], ['', 'ok'], [1, 1], false, ''), null);
    // The path as compared keeps reserved escapes only (`%2F`): decoded, `..%2F` is `../`.
    assert.equal(make('/x/..%2F/y', [3], [8], ['', 'ok'], [1, 1], true, ''), null);
    assert.deepEqual(make('/x/..%2F/y', [3], [8], ['', 'ok'], [1, 1], false, ''), { a: '..%2F', b: 'ok' });
    assert.equal(make('/x/ok/y', [3], [5], ['', '..'], [0, 1], false, ''), null);
    assert.deepEqual(make('/x/a..b/y', [3], [7], ['', '...'], [1, 1], false, ''), { a: 'a..b', b: '...' });
    // A value the walk saw no `.` in is not asked about: the maker trusts the walk's mark.
    assert.deepEqual(make('/x/../y', [3], [5], ['', 'ok'], [0, 0], false, ''), { a: '..', b: 'ok' });
  });

  it('is shared by routes with the same parameters', () => {
    assert.equal(paramsMaker(['id'], ['segment'], false), paramsMaker(['id'], ['segment'], false));
    assert.notEqual(paramsMaker(['id'], ['segment'], false), paramsMaker(['id'], ['capture'], false));
    assert.notEqual(paramsMaker(['id'], ['segment'], false), paramsMaker(['id'], ['segment'], true));
  });
});
