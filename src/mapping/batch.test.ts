import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { batchCalls, batchObjects, compileBatch } from './batch.js';

const batch = (max: number, separator = ',') =>
  compileBatch({ path: '/users?ids={values}&full=1', separator, key: 'id', max });

describe('batchCalls', () => {
  it('splits the values into calls of at most max, each value percent-encoded, the separator as written', () => {
    assert.deepEqual(batchCalls(batch(2), ['a', 'b c', 'd/e']), [
      { path: '/users?ids=a,b%20c&full=1', values: ['a', 'b c'] },
      { path: '/users?ids=d%2Fe&full=1', values: ['d/e'] },
    ]);
    assert.deepEqual(batchCalls(batch(100, '&ids='), ['1', '2']), [
      { path: '/users?ids=1&ids=2&full=1', values: ['1', '2'] },
    ]);
    assert.deepEqual(batchCalls(batch(100), []), []);
  });
  it('250 values with max 100 make exactly 3 calls', () => {
    const values = Array.from({ length: 250 }, (_, i) => `u${i}`);
    const calls = batchCalls(batch(100), values);
    assert.deepEqual(
      calls.map((c) => c.values.length),
      [100, 100, 50],
    );
    assert.deepEqual(
      calls.flatMap((c) => c.values),
      values,
    );
  });
  it('splits a batch whose path would pass the length limit', () => {
    const values = Array.from({ length: 10 }, (_, i) => `${i}`.padStart(10, 'x'));
    const calls = batchCalls(batch(100), values, 60);
    assert.ok(calls.length > 1);
    for (const c of calls) assert.ok(c.path.length <= 60 || c.values.length === 1, c.path);
    assert.deepEqual(
      calls.flatMap((c) => c.values),
      values,
    );
  });
});

describe('batchObjects', () => {
  it('reads an array of objects by their key field, strings unescaped and numbers as written', () => {
    const found = batchObjects('[{"id":"a\\u0062","n":1},{"id":7,"n":2},{"n":3},5]', 'id');
    assert.equal(found, undefined, 'an array with a non-object is no batch answer');
    const ok = batchObjects('[{"id":"a\\u0062","n":1},{"id":7,"n":2},{"n":3}]', 'id')!;
    assert.deepEqual(
      [...ok],
      [
        ['ab', '{"id":"a\\u0062","n":1}'],
        ['7', '{"id":7,"n":2}'],
      ],
    );
  });
  it('reads an object keyed by value', () => {
    assert.deepEqual(
      [...batchObjects('{"u1":{"name":"a"},"u2":null,"u3":{"name":"c"}}', 'id')!],
      [
        ['u1', '{"name":"a"}'],
        ['u3', '{"name":"c"}'],
      ],
    );
  });
  it('refuses anything else', () => {
    assert.equal(batchObjects('"text"', 'id'), undefined);
    assert.equal(batchObjects('[1,2]', 'id'), undefined);
  });
  it('matches an array answer by its key, escaped or not, the last one winning, in one pass', () => {
    const objects = batchObjects('[{"id":1,"id":"a"},{"i\\u0064":"b\\u0041"},{"id":null},{"id":true},{}]', 'id')!;
    assert.deepEqual(
      [...objects],
      [
        ['a', '{"id":1,"id":"a"}'],
        ['bA', '{"i\\u0064":"b\\u0041"}'],
        ['true', '{"id":true}'],
      ],
    );
    assert.equal(batchObjects('[{"id":1},2]', 'id'), undefined);
    assert.equal(batchObjects('[{"id":1}] x', 'id'), undefined);
    assert.deepEqual([...batchObjects(' [ ] ', 'id')!], []);
  });
});
