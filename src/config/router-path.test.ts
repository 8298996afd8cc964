import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toRouterPath } from './router-path.js';

describe('toRouterPath', () => {
  it('converts templates to router syntax', () => {
    assert.equal(toRouterPath('/a/{x}:b/{y}'), '/a/:x::b/:y');
  });
});
