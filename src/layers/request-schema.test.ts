import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isJsonBody } from './request-schema.js';
import { compileBodySchema, MAX_REPORTED } from './json-schema.js';

describe('isJsonBody', () => {
  const cases: [Record<string, string>, boolean][] = [
    [{ 'content-type': 'application/json' }, true],
    [{ 'content-type': 'Application/JSON; charset=utf-8' }, true],
    [{ 'content-type': 'application/problem+json' }, true],
    [{ 'content-type': 'application/vnd.api+json;v=2' }, true],
    [{ 'content-type': 'text/plain' }, false],
    [{ 'content-type': 'application/jsonp' }, false],
    [{ 'content-type': 'application/json-seq' }, false],
    [{}, false],
    [{ 'content-type': 'application/json', 'content-encoding': 'gzip' }, false],
    [{ 'content-type': 'application/json', 'content-encoding': 'identity' }, true],
  ];
  for (const [headers, expected] of cases)
    it(`${JSON.stringify(headers)} -> ${expected}`, () => assert.equal(isJsonBody(headers), expected));
});

describe('compileBodySchema', () => {
  it('pointers escape ~ and / in property names (RFC 6901)', () => {
    const v = compileBodySchema({ type: 'object', required: ['a/b'], additionalProperties: false, properties: {} });
    assert.deepEqual(v.validate({ 'x~y': 1 }), [
      { pointer: '/a~1b', message: 'is required' },
      { pointer: '/x~0y', message: 'is not allowed' },
    ]);
  });

  it(`reports at most ${MAX_REPORTED} failures`, () => {
    const v = compileBodySchema({ type: 'array', items: { type: 'string' } });
    assert.equal(v.validate(Array.from({ length: 50 }, (_, i) => i))?.length, MAX_REPORTED);
  });

  it('the same $id compiles again (a reload of the same file)', () => {
    const schema = { $id: 'https://example.com/order', type: 'object' };
    compileBodySchema(schema);
    assert.equal(compileBodySchema(schema).validate({}), undefined);
  });

  it('a schema that is not an object is refused', () => {
    assert.throws(() => compileBodySchema([]), /must be an object/);
  });
});
