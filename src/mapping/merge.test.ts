import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CompiledBackend } from '../pipeline/types.js';
import { compileFieldFilter } from './field-filter.js';
import { mergeAnswers, shapeAnswer } from './merge.js';

const backend = (b: Partial<CompiledBackend>): CompiledBackend =>
  ({ index: 0, group: undefined, target: undefined, filter: undefined, ...b }) as CompiledBackend;

describe('shapeAnswer', () => {
  it('takes the target, then filters, then groups', () => {
    const b = backend({ target: ['data'], filter: compileFieldFilter({ deny: ['x'] }), group: 'g' });
    assert.deepEqual(shapeAnswer(b, '{"data":{"x":1,"y":2},"z":3}'), { ok: true, fields: '{"y":2}' });
  });
  it('a missing target, or an answer merged at the top level that is not an object, is a failure', () => {
    assert.deepEqual(shapeAnswer(backend({ target: ['a', 'b'] }), '{"a":{"c":1}}'), {
      ok: false,
      reason: 'no field a.b in the answer',
    });
    assert.deepEqual(shapeAnswer(backend({}), '[{"a":1}]'), {
      ok: false,
      reason: 'the answer is not a JSON object (give the backend a group)',
    });
    assert.deepEqual(shapeAnswer(backend({ group: 'list' }), '[1,2]'), { ok: true, fields: '[1,2]' });
  });
});

describe('mergeAnswers', () => {
  it('merges in backend order; a later field replaces an earlier one in its place; failures are left out', () => {
    const backends = [backend({}), backend({ group: 'g' }), backend({}), backend({})];
    const parts = [
      shapeAnswer(backends[0]!, '{"a":1,"b":12345678901234567890}'),
      shapeAnswer(backends[1]!, '[true]'),
      { ok: false as const, reason: 'refused' },
      shapeAnswer(backends[3]!, '{"a":"late","c":"\\u00e9"}'),
    ];
    assert.equal(mergeAnswers(backends, parts), '{"a":"late","b":12345678901234567890,"g":[true],"c":"\\u00e9"}');
  });
});
