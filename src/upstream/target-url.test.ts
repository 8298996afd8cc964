import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Template } from '../config/types.js';
import { parseTemplate } from '../config/syntax/template.js';
import { appendQuery, compileUrlBuilder, encodeValue, isDotSegmentValue } from './target-url.js';

function template(source: string): Template {
  const t = parseTemplate(source);
  if ('error' in t) throw new Error(t.error);
  return t;
}

describe('parseTemplate', () => {
  it('splits literals and placeholders', () => {
    const t = template('/users/{id}/posts?x={y}');
    assert.deepEqual(t.parts, ['/users/', { param: 'id' }, '/posts?x=', { param: 'y' }]);
    assert.deepEqual(t.params, ['id', 'y']);
    assert.equal(t.hasQuery, true);
  });
  it('rejects malformed templates', () => {
    assert.deepEqual(parseTemplate('/a/{id'), { error: 'unclosed "{" at position 4 of "/a/{id"' });
    assert.deepEqual(parseTemplate('/a/id}'), { error: 'unmatched "}" at position 6 of "/a/id}"' });
    assert.deepEqual(parseTemplate('/a/{}'), {
      error: '"{}" is not a valid parameter name (letters, digits, _ and -)',
    });
    assert.deepEqual(parseTemplate('/a/{x}{y}'), { error: 'parameters {x} and {y} must be separated by text' });
  });
});

describe('compileUrlBuilder', () => {
  it('percent-encodes every value so it cannot change the structure', () => {
    const build = compileUrlBuilder(template('/users/{id}?company={c}'));
    assert.equal(build({ id: '../admin', c: '1&role=admin' }), '/users/..%2Fadmin?company=1%26role%3Dadmin');
    assert.equal(build({ id: 'a b/é', c: '#x?' }), '/users/a%20b%2F%C3%A9?company=%23x%3F');
  });
  it('encodes dot-only values, which a backend would normalise as path segments', () => {
    assert.equal(encodeValue('..'), '%2E%2E');
    assert.equal(encodeValue('.'), '%2E');
    assert.equal(encodeValue('a.b'), 'a.b');
    // What encodeURIComponent leaves alone stays as it is; anything else is encoded as it encodes it.
    for (const v of ["Az09-_.!~*'()", '', 'x y', 'a/b', 'é', 'a%20', 'k=v&w', '[1]'])
      assert.equal(encodeValue(v), encodeURIComponent(v));
  });
  it('returns the fixed path when there are no placeholders', () => {
    assert.equal(compileUrlBuilder(template('/static?x=1'))({}), '/static?x=1');
  });
});

describe('appendQuery', () => {
  it('appends after the template query with &, else with ?', () => {
    assert.equal(
      appendQuery('/users?companyId=7', template('/users?companyId={c}'), 'page=2'),
      '/users?companyId=7&page=2',
    );
    assert.equal(appendQuery('/users', template('/users'), 'page=2'), '/users?page=2');
    assert.equal(appendQuery('/users', template('/users'), ''), '/users');
  });
  it('drops client parameters that the template sets, however they are encoded', () => {
    const users = template('/users?companyId={c}');
    assert.deepEqual([...users.queryKeys], ['companyId']);
    assert.equal(appendQuery('/users?companyId=7', users, 'companyId=9&page=2'), '/users?companyId=7&page=2');
    assert.equal(
      appendQuery('/users?companyId=7', users, 'company%49d=9&companyId&page=2'),
      '/users?companyId=7&page=2',
    );
    assert.equal(appendQuery('/u?a=1&b=2', template('/u?a={x}&b={y}'), 'b=3&c=4&&a=5'), '/u?a=1&b=2&c=4');
    assert.equal(appendQuery('/u?a=1', template('/u?a=1'), 'a=2'), '/u?a=1');
  });
  it('drops the bracketed spellings of a parameter the template sets (PHP, qs, Rack arrays)', () => {
    const users = template('/users?companyId={c}');
    for (const sent of ['companyId[]=9', 'companyId[0]=9', 'companyId[x]=9', 'companyId%5B%5D=9', 'companyId[][a]=9'])
      assert.equal(appendQuery('/users?companyId=7', users, `${sent}&page=2`), '/users?companyId=7&page=2', sent);
    assert.equal(appendQuery('/users?companyId=7', users, 'companyIds[]=1'), '/users?companyId=7&companyIds[]=1');
  });
  it('drops a _method override in any case and escaping, with or without a template query', () => {
    for (const sent of ['_method=DELETE', '_METHOD=PUT', '%5Fmethod=PUT', '%5fMethod=PUT', '_method[]=PUT', '_method'])
      assert.equal(appendQuery('/u', template('/u'), `a=1&${sent}&b=2`), '/u?a=1&b=2', sent);
    assert.equal(appendQuery('/u?x=1', template('/u?x=1'), '_method=DELETE'), '/u?x=1');
    assert.equal(appendQuery('/u', template('/u'), '_method=DELETE'), '/u');
    assert.equal(appendQuery('/u', template('/u'), 'my_method=1&method=2'), '/u?my_method=1&method=2');
  });
});

describe('isDotSegmentValue', () => {
  it('refuses values that act as a dot-segment once decoded', () => {
    for (const v of ['.', '..', '../', '../admin', 'a/..', 'a/../b', '..\\', 'a\\..\\b', '/..'])
      assert.equal(isDotSegmentValue(v), true, v);
  });
  it('keeps dots that are part of a name', () => {
    for (const v of ['...', 'a..b', '..a', 'a..', 'v1.2', '.hidden', 'x/.../y', ''])
      assert.equal(isDotSegmentValue(v), false, v);
  });
});
