import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { placeholders } from '../../config/syntax/headers.js';
import { compileHeaderEdit, editHeaderList, editHeaderRecord, fillTemplate } from './header-edits.js';

const values = (params: Record<string, string>, claims?: Record<string, unknown>) => ({ params, claims });

describe('placeholders', () => {
  it('reads {param} and {claims.NAME}, in order', () => {
    assert.deepEqual(placeholders('a-{id}-{claims.org.id}'), [{ param: 'id' }, { claim: 'org.id' }]);
    assert.deepEqual(placeholders('plain'), []);
  });
  it('refuses malformed ones', () => {
    assert.deepEqual(placeholders('{a b}'), { error: '"{a b}" is neither {param} nor {claims.NAME}' });
    assert.deepEqual(placeholders('{claims.}'), { error: '"{claims.}" is neither {param} nor {claims.NAME}' });
    assert.deepEqual(placeholders('x{id'), { error: 'an unmatched brace' });
    assert.deepEqual(placeholders('x}'), { error: 'an unmatched brace' });
  });
});

describe('compileHeaderEdit and fillTemplate', () => {
  it('has nothing to do without rules', () => {
    assert.equal(compileHeaderEdit(undefined), undefined);
    assert.equal(compileHeaderEdit({ set: {}, remove: [] }), undefined);
  });
  it('removes the names it sets, lower-cased', () => {
    const edit = compileHeaderEdit({ set: { 'X-A': '1' }, remove: ['Cookie'] })!;
    assert.deepEqual([...edit.remove].sort(), ['cookie', 'x-a']);
  });
  it('fills params and claims; lists joined; objects and absent values leave the header unset', () => {
    const [, parts] = compileHeaderEdit({ set: { x: '{id}:{claims.sub}:{claims.g}' } })!.set[0]!;
    assert.equal(fillTemplate(parts, values({ id: '7' }, { sub: 'u', g: ['a', 1, true] })), '7:u:a,1,true');
    assert.equal(fillTemplate(parts, values({ id: '7' }, { sub: { x: 1 }, g: 'a' })), undefined);
    assert.equal(fillTemplate(parts, values({ id: '7' }, undefined)), undefined);
    assert.equal(fillTemplate(parts, values({}, { sub: 'u', g: 'a' })), undefined);
  });
  it('refuses control characters and overlong values; sends non-ASCII as UTF-8 bytes', () => {
    const [, parts] = compileHeaderEdit({ set: { x: '{v}' } })!.set[0]!;
    assert.equal(fillTemplate(parts, values({ v: 'a\r\nb' })), undefined);
    assert.equal(fillTemplate(parts, values({ v: 'a\u0000' })), undefined);
    assert.equal(fillTemplate(parts, values({ v: 'x'.repeat(4097) })), undefined);
    assert.equal(fillTemplate(parts, values({ v: '日本' })), Buffer.from('日本', 'utf8').toString('latin1'));
  });
});

describe('editing headers', () => {
  const edit = compileHeaderEdit({ set: { 'X-Who': '{claims.sub}', 'X-Fixed': 'v' }, remove: ['Cookie'] })!;
  it('a flat list loses removed and replaced names, then gains the set ones', () => {
    const out = editHeaderList(edit, ['Cookie', 'a', 'x-who', 'forged', 'Accept', '*/*'], values({}, { sub: 'u1' }));
    assert.deepEqual(out, ['Accept', '*/*', 'x-who', 'u1', 'x-fixed', 'v']);
  });
  it('a flat list loses the underscore spellings of removed and replaced names too', () => {
    const out = editHeaderList(
      edit,
      ['X_Who', 'forged', 'x_fixed', 'forged', 'X_Other', '1'],
      values({}, { sub: 'u1' }),
    );
    assert.deepEqual(out, ['X_Other', '1', 'x-who', 'u1', 'x-fixed', 'v']);
  });
  it('a record is edited in place', () => {
    const headers: Record<string, string | string[]> = { cookie: 'a', 'x-who': ['1', '2'], accept: '*/*' };
    editHeaderRecord(edit, headers, values({}, undefined));
    assert.deepEqual(headers, { accept: '*/*', 'x-fixed': 'v' });
  });
});
