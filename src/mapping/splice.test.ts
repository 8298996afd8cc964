import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { scanItemTable } from './json-scan.js';
import { spliceItems, type ItemEdit } from './splice.js';

function apply(
  text: string,
  ...edits: (Partial<{ set: Record<string, string>; remove: string[] }> | undefined)[]
): string {
  const items = scanItemTable(text)!;
  const full: (ItemEdit | undefined)[] = edits.map((e) =>
    e === undefined ? undefined : { set: new Map(Object.entries(e.set ?? {})), remove: new Set(e.remove ?? []) },
  );
  return spliceItems(text, items, full);
}

describe('spliceItems', () => {
  it('appends a new tag after the last member', () => {
    assert.equal(apply('{"a":1}', { set: { t: '{"x":2}' } }), '{"a":1,"t":{"x":2}}');
  });

  it('adds several tags in order and leaves untouched items byte for byte', () => {
    assert.equal(
      apply('[ {"a":1} ,\n {"b": 2} ]', undefined, { set: { t: '1', u: '[2]' } }),
      '[ {"a":1} ,\n {"b": 2,"t":1,"u":[2]} ]',
    );
  });

  it('mixes appended tags, removed keys and replaced members across the items of one body', () => {
    assert.equal(
      apply(
        '[{"a":1},{"a":2,"k":3},{"a":4},{"t":0,"b":5},{"c":6}]',
        { set: { t: '"x"' } },
        { set: { t: '"y"' }, remove: ['k'] },
        { set: { t: '"z"', u: '1' } },
        { set: { t: '"w"' } },
        undefined,
      ),
      '[{"a":1,"t":"x"},{"a":2,"t":"y"},{"a":4,"t":"z","u":1},{"t":"w","b":5},{"c":6}]',
    );
  });

  it('fills an empty object', () => {
    assert.equal(apply('{ }', { set: { t: 'true' } }), '{"t":true }');
  });

  it('replaces the value of an existing key named like the tag, in place', () => {
    assert.equal(apply('{"t": "old", "a": 1}', { set: { t: '{"new":1}' } }), '{"t": {"new":1}, "a": 1}');
  });

  it('removes a key at the start, in the middle and at the end', () => {
    assert.equal(apply('{"k":1, "a":2, "b":3}', { set: { t: '0' }, remove: ['k'] }), '{"a":2, "b":3,"t":0}');
    assert.equal(apply('{"a":2, "k":1, "b":3}', { set: { t: '0' }, remove: ['k'] }), '{"a":2, "b":3,"t":0}');
    assert.equal(apply('{"a":2, "b":3, "k":1}', { set: { t: '0' }, remove: ['k'] }), '{"a":2, "b":3,"t":0}');
  });

  it('removes several keys, adjacent or trailing', () => {
    assert.equal(
      apply('{"k":1,"j":2,"a":3,"x":4,"y":5}', { set: { t: '0' }, remove: ['k', 'j', 'x', 'y'] }),
      '{"a":3,"t":0}',
    );
  });

  it('removes every key and still adds the tag', () => {
    assert.equal(apply('{ "k" : 1 , "j":2 }', { set: { t: '0' }, remove: ['k', 'j'] }), '{ "t":0 }');
  });

  it('a removed key that is also the tag is replaced instead', () => {
    assert.equal(
      apply('{"author":7,"a":1}', { set: { author: '{"n":1}' }, remove: ['author'] }),
      '{"author":{"n":1},"a":1}',
    );
  });

  it('keeps the text when there is nothing to do', () => {
    const text = '[{"a":1}]';
    assert.equal(apply(text, { set: {}, remove: [] }), text);
  });

  it('escapes tag names as JSON keys', () => {
    assert.equal(apply('{}', { set: { 'a"b': '1' } }), '{"a\\"b":1}');
  });
});
