import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isPrefixPattern } from './router-path.js';

describe('isPrefixPattern', () => {
  it('is a prefix route only with one "*", ending the route as a whole segment', () => {
    assert.equal(isPrefixPattern('/static/*'), true);
    assert.equal(isPrefixPattern('/*'), true);
    assert.equal(isPrefixPattern('/static*'), false);
    assert.equal(isPrefixPattern('/a/*/b'), false);
    assert.equal(isPrefixPattern('/a/*/*'), false);
  });
});
