import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jsonLocator, jsonSyntaxError } from './json-locator.js';
import { parseConfigText, type ConfigPath } from './parse.js';

/** Every path of `value`, and one missing path below each container. */
function pathsOf(value: unknown, path: ConfigPath = []): ConfigPath[] {
  const out: ConfigPath[] = [path];
  if (Array.isArray(value)) {
    value.forEach((item, i) => out.push(...pathsOf(item, [...path, i])));
    out.push([...path, value.length], [...path, 'x']);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...path, k]));
    out.push([...path, 'missing', 0], [...path, 0]);
  } else out.push([...path, 'below'], [...path, 0]);
  return out;
}

/** The same questions asked of the locator and of the YAML parser (JSON is YAML). */
function assertSameAsYaml(text: string): void {
  const yaml = parseConfigText(text, 'f.json', {});
  assert.deepEqual(yaml.problems, []);
  const json = jsonLocator(text);
  const value = JSON.parse(text) as unknown;
  for (const path of pathsOf(value)) {
    assert.deepEqual(json.locate(path), yaml.locate(path), `locate ${JSON.stringify(path)}`);
    for (const key of ['a', 'b', 'nope', 'q"uote', 'é']) {
      assert.deepEqual(
        json.locateKey(path, key),
        yaml.locateKey(path, key),
        `locateKey ${JSON.stringify(path)} ${key}`,
      );
      assert.deepEqual(json.keysBefore(path, key), yaml.keysBefore(path, key), `keysBefore ${JSON.stringify(path)}`);
    }
  }
}

describe('jsonLocator', () => {
  it('locates values, keys and the keys before one as the YAML parser does, on nested objects and arrays', () => {
    assertSameAsYaml(
      JSON.stringify(
        { a: { b: [1, { a: 'x', b: [[], {}, [true, null, -1.5e3]] }], c: 'y' }, b: [], d: { a: {} } },
        null,
        2,
      ),
    );
  });

  it('reads escaped keys and strings ending in backslashes, and compact or irregular spacing', () => {
    assertSameAsYaml(
      '{"q\\"uote":{"a":"\\\\","b":"\\"}{]["},"\\u00e9":[ "a\\\\\\"" ,{ "a" :1 } ],\n\n   "a"  :\r\n [ {"b":[ ]} ,2 ] }',
    );
    assertSameAsYaml('{"a":[{"b":"]"},{"b":"}"}],"b":{"a":"\\\\\\\\"}}');
    assertSameAsYaml('  [ {"a" : 1}, [ {"b": 2} ] ]  ');
  });

  it('finds a consumer at the end of a large file without reading the rest', () => {
    const consumers = Array.from({ length: 20_000 }, (_, i) => ({ id: `c${i}`, keys: [`sha256:${i}`], claims: {} }));
    const text = JSON.stringify({ consumers }, null, 1);
    const at = jsonLocator(text).locate(['consumers', 19_999, 'keys', 0]);
    const offset = text.indexOf('"sha256:19999"');
    const lines = text.slice(0, offset).split('\n');
    assert.deepEqual(at, { line: lines.length, col: lines.at(-1)!.length + 1 });
  });

  it('takes a key written twice where JSON.parse takes its value: the last one', () => {
    const text = '{"a": 1,\n "a": {"b": 2}}';
    assert.deepEqual(JSON.parse(text), { a: { b: 2 } });
    const json = jsonLocator(text);
    assert.deepEqual(json.locate(['a', 'b']), { line: 2, col: 13 });
    assert.deepEqual(json.locateKey([], 'a'), { line: 2, col: 2 });
  });
});

describe('jsonSyntaxError', () => {
  const errorOf = (text: string) => {
    try {
      JSON.parse(text);
    } catch (err) {
      return jsonSyntaxError(text, err as Error);
    }
    throw new Error('parsed');
  };

  it("gives the line and column of JSON.parse's offset, and a message without it", () => {
    const found = errorOf('{\n  "a": 1,\n  "b" 2\n}');
    assert.equal(found?.line, 3);
    assert.equal(found?.col, 7);
    assert.ok(found !== undefined && !/position/.test(found.message), found?.message);
  });

  it('is undefined for a message without an offset', () => {
    assert.equal(jsonSyntaxError('x', new SyntaxError('Unexpected token')), undefined);
  });
});
