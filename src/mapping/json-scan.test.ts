import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { scanItems, stringValue } from './json-scan.js';

describe('scanItems', () => {
  it('finds each item and its top-level members of an array of objects', () => {
    const text = ' [ {"a": 1, "b" :"x"} , {} ] ';
    const items = scanItems(text)!;
    assert.equal(items.length, 2);
    assert.equal(text.slice(items[0]!.start, items[0]!.end), '{"a": 1, "b" :"x"}');
    assert.equal(text.slice(items[1]!.start, items[1]!.end), '{}');
    const [a, b] = items[0]!.members;
    assert.deepEqual(
      { name: a!.name, kind: a!.kind, value: text.slice(a!.valueStart, a!.valueEnd) },
      { name: 'a', kind: 'number', value: '1' },
    );
    assert.deepEqual(
      { name: b!.name, kind: b!.kind, value: text.slice(b!.valueStart, b!.valueEnd) },
      { name: 'b', kind: 'string', value: '"x"' },
    );
    assert.equal(text[a!.keyStart], '"');
  });

  it('treats a single object as one item', () => {
    const items = scanItems('{"k":{"n":[1,{"x":"}"}]},"t":true,"f":false,"z":null,"arr":[]}')!;
    assert.equal(items.length, 1);
    assert.deepEqual(
      items[0]!.members.map((m) => [m.name, m.kind]),
      [
        ['k', 'object'],
        ['t', 'true'],
        ['f', 'false'],
        ['z', 'null'],
        ['arr', 'array'],
      ],
    );
  });

  it('keeps number text as written, including integers beyond 2^53', () => {
    const text = '{"a":12345678901234567890,"b":-0.50e+10,"c":1E5}';
    const m = scanItems(text)![0]!.members;
    assert.deepEqual(
      m.map((x) => text.slice(x.valueStart, x.valueEnd)),
      ['12345678901234567890', '-0.50e+10', '1E5'],
    );
  });

  it('unescapes keys', () => {
    const m = scanItems('{"a\\u0042c":1,"q\\"":2}')![0]!.members;
    assert.deepEqual(
      m.map((x) => x.name),
      ['aBc', 'q"'],
    );
  });

  const notMappable = [
    '',
    ' ',
    '1',
    '"s"',
    'null',
    'true',
    '[1]',
    '[{}, 2]',
    '[[{}]]',
    '{',
    '{"a":1,}',
    '[{},]',
    '{"a" 1}',
    "{'a':1}",
    '{"a":01}',
    '{"a":1.}',
    '{"a":-}',
    '{"a":.5}',
    '{"a":1e}',
    '{"a":"\\x"}',
    '{"a":"\\u12G4"}',
    '{"a":"tab\there"}',
    '{"a":tru}',
    '{"a":1} {}',
    '{"a":[1 2]}',
    '{"a":{"b":1,}}',
    '{"a":NaN}',
  ];
  for (const text of notMappable) {
    it(`undefined for ${JSON.stringify(text)}`, () => assert.equal(scanItems(text), undefined));
  }

  it('names each member from its own key when items differ in keys, order or escapes', () => {
    const text = '[{"a":1,"ab":2},{"ab":3,"a":4},{"a\\u0062":5,"a":6},{"ab":7},{"b":8,"a":9,"c":0}]';
    const names = scanItems(text)!.map((item) => item.members.map((m) => m.name));
    assert.deepEqual(names, [['a', 'ab'], ['ab', 'a'], ['ab', 'a'], ['ab'], ['b', 'a', 'c']]);
  });

  it('names a member by its own key when its value is an object with keys of its own', () => {
    const text = '[{"a":{"x":1},"b":2},{"c":{"y":{"z":3}},"b":4}]';
    const names = scanItems(text)!.map((item) => item.members.map((m) => m.name));
    assert.deepEqual(names, [
      ['a', 'b'],
      ['c', 'b'],
    ]);
  });

  it('keeps every member of a body with more members than its first guess', () => {
    const text = JSON.stringify(Array.from({ length: 300 }, (_, i) => ({ [`k${i}`]: i, v: [i] })));
    const items = scanItems(text)!;
    assert.equal(items.length, 300);
    assert.deepEqual(
      items[299]!.members.map((m) => [m.name, text.slice(m.valueStart, m.valueEnd)]),
      [
        ['k299', '299'],
        ['v', '[299]'],
      ],
    );
  });

  it('accepts an empty array (no items)', () => assert.deepEqual(scanItems('[]'), []));

  it('survives deep nesting without recursion', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    assert.equal(scanItems(`{"a":${deep}}`)!.length, 1);
  });
});

describe('stringValue', () => {
  it('unescapes only when needed', () => {
    assert.equal(stringValue('"plain"', 0, 7), 'plain');
    assert.equal(stringValue('x"a\\/b\\u00fc"', 1, 13), 'a/bü');
  });
  it('finds the end of a string natively only when no escape or control character comes first', () => {
    // A raw control character inside a later string, after clean ones, is still refused.
    assert.equal(scanItems('{"a":"x","b":"y\u0001"}'), undefined);
    assert.equal(scanItems('{"a":"x","b":"y\nz"}'), undefined);
    // Newlines between tokens are whitespace, not part of a string.
    const pretty = scanItems('[\n  {"a": "x",\n   "b": "y"}\n]')!;
    assert.deepEqual(
      pretty[0]!.members.map((m) => m.name),
      ['a', 'b'],
    );
    // An escaped quote does not end the string; the next clean string is found after it.
    const escaped = scanItems('{"a":"x\\"y","b":"\\\\","c":"z"}')!;
    assert.deepEqual(
      escaped[0]!.members.map((m) => [m.name, m.valueEnd - m.valueStart]),
      [
        ['a', 6],
        ['b', 4],
        ['c', 3],
      ],
    );
  });
});
