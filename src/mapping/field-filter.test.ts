import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FieldRules } from '../config/types.js';
import { compileFieldFilter } from './field-filter.js';

const run = (rules: FieldRules, text: string) => compileFieldFilter(rules)!(text);

describe('compileFieldFilter', () => {
  it('has nothing to do without rules', () => {
    assert.equal(compileFieldFilter(undefined), undefined);
    assert.equal(compileFieldFilter({ deny: [], rename: {} }), undefined);
  });
  it('allow keeps only the listed fields, nested by dot path, in objects and arrays of objects', () => {
    const text = '{"id":1,"secret":"s","user":{"name":"a","email":"e"},"tags":[{"k":1,"v":2},{"k":3}],"n":5}';
    assert.equal(
      run({ allow: ['id', 'user.name', 'tags.k', 'n.x'] }, text),
      '{"id":1,"user":{"name":"a"},"tags":[{"k":1},{"k":3}]}',
    );
  });
  it('deny drops the listed fields; a path into a scalar changes nothing', () => {
    const text = '{"id":1,"password":"p","user":{"name":"a","token":"t"},"n":5}';
    assert.equal(run({ deny: ['password', 'user.token', 'n.x'] }, text), '{"id":1,"user":{"name":"a"},"n":5}');
  });
  it('applies to each item of an array body and keeps the text between items', () => {
    assert.equal(run({ deny: ['b'] }, '[ {"a":1,"b":2},\n {"a":3} ]'), '[ {"a":1},\n {"a":3} ]');
  });
  it('renames top-level fields; a renamed field replaces an existing one of that name', () => {
    assert.equal(run({ rename: { a: 'b' } }, '{"b":0,"a":1,"c":2}'), '{"b":1,"c":2}');
    assert.equal(run({ rename: { a: 'b', b: 'a' } }, '{"a":1,"b":2}'), '{"b":1,"a":2}');
    assert.equal(run({ allow: ['a'], rename: { a: 'x' } }, '{"a":1,"b":2}'), '{"x":1}');
  });
  it('keeps kept values byte for byte: big numbers, escapes, number text', () => {
    const text = '{"big":12345678901234567890,"s":"\\u00e9\\n","f":1.0e5,"drop":1}';
    assert.equal(run({ deny: ['drop'] }, text), '{"big":12345678901234567890,"s":"\\u00e9\\n","f":1.0e5}');
  });
  it('leaves what is not an object or an array of objects', () => {
    assert.equal(run({ deny: ['a'] }, '[1,2]'), undefined);
    assert.equal(run({ deny: ['a'] }, '"text"'), undefined);
    assert.equal(run({ deny: ['a'] }, '{"a":'), undefined);
  });
});
