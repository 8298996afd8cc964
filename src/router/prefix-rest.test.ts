import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isPlainRest, safeRest } from './prefix-rest.js';

describe('isPlainRest', () => {
  it('is true only for rests safeRest returns as they are', () => {
    const plain = ['', 'a', 'css/site.css', 'dir/', 'a..b/...x/.hidden', 'a.', 'A-z_0~9.txt'];
    const other = [
      '..',
      '.',
      '...',
      'a/../b',
      'a/./b',
      '/x',
      'a//b',
      'a%20b',
      'a%2Fb',
      'a\\b',
      'é',
      'a b',
      "it's",
      'x/..',
    ];
    for (const rest of plain) {
      assert.equal(isPlainRest(`/p/${rest}`, 3), true, rest);
      assert.equal(safeRest(rest), rest, rest);
    }
    for (const rest of other) {
      assert.equal(isPlainRest(`/p/${rest}`, 3), false, rest);
      // Not plain: safeRest refuses it or changes it, or (for `'`) leaves it; never the reverse.
    }
    assert.equal(safeRest('...'), '%2E%2E%2E');
    assert.equal(safeRest('a/../b'), undefined);
  });
});
