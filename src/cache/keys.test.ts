import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { varyValue } from './keys.js';

describe('the Vary key of a request field (RFC 9111 4.1)', () => {
  it('ignores whitespace around list members and parameters', () => {
    assert.equal(varyValue('foo', ' 1, 2 '), varyValue('foo', '1,2'));
    assert.equal(varyValue('accept', 'text/html ; q=0.5,  application/json'), 'text/html;q=0.5,application/json');
    assert.equal(varyValue('foo', undefined), '');
  });

  it('ignores the case of language tags, not of other values', () => {
    assert.equal(varyValue('accept-language', 'eN, De'), varyValue('accept-language', 'en,de'));
    assert.notEqual(varyValue('foo', 'A'), varyValue('foo', 'a'));
    assert.notEqual(varyValue('accept-language', 'en, de'), varyValue('accept-language', 'de, en'));
  });
});
