import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CompiledMappingRule } from '../pipeline/types.js';
import type { Origin, Template } from '../config/types.js';
import { parseTemplate } from '../config/syntax/template.js';
import { compileUrlBuilder } from '../upstream/target-url.js';
import { parseService } from '../config/syntax/service.js';
import { scanItemTable } from './json-scan.js';
import { compileBatch } from './batch.js';
import { MAX_MAPPING_CALLS_PER_RESPONSE, planCalls, ruleFieldNames } from './plan.js';

function rule(index: number, path: string, service = '127.0.0.1:9000', tag = `t${index}`): CompiledMappingRule {
  const t = parseTemplate(path) as Template;
  return {
    index,
    tag,
    removeKeyMapping: false,
    service,
    origin: parseService(service) as Origin,
    path: t,
    buildPath: compileUrlBuilder(t),
    batch: undefined,
  };
}

function plan(text: string, rules: CompiledMappingRule[], maxCalls?: number) {
  const items = scanItemTable(text)!;
  const p = planCalls(text, items, rules, ruleFieldNames(rules), maxCalls);
  return { urls: p.calls.map((c) => c.url), callOf: [...p.callOf], overLimit: p.overLimit };
}

describe('planCalls', () => {
  it('dedupes URLs: 100 items over 5 values -> 5 calls', () => {
    const text = `[${Array.from({ length: 100 }, (_, i) => `{"a":${i % 5}}`).join(',')}]`;
    const p = plan(text, [rule(0, '/u/{a}')]);
    assert.deepEqual(p.urls, [
      'http://127.0.0.1:9000/u/0',
      'http://127.0.0.1:9000/u/1',
      'http://127.0.0.1:9000/u/2',
      'http://127.0.0.1:9000/u/3',
      'http://127.0.0.1:9000/u/4',
    ]);
    assert.deepEqual(p.callOf.slice(0, 7), [0, 1, 2, 3, 4, 0, 1]);
  });

  it('the same path on two origins is two calls; the same URL from two rules is one', () => {
    const p = plan('{"a":1,"b":1}', [rule(0, '/u/{a}'), rule(1, '/u/{a}', '127.0.0.1:9001'), rule(2, '/u/{b}')]);
    assert.deepEqual(p.urls, ['http://127.0.0.1:9000/u/1', 'http://127.0.0.1:9001/u/1']);
    assert.deepEqual(p.callOf, [0, 1, 0]);
  });

  it('uses values as written and percent-encodes them', () => {
    const text = '[{"a":1000000},{"a":12345678901234567890},{"a":true},{"a":"x y&z"},{"a":"\\u00e9"},{"a":"..x\\/"}]';
    assert.deepEqual(
      plan(text, [rule(0, '/c?id={a}')]).urls.map((u) => u.slice('http://127.0.0.1:9000'.length)),
      ['/c?id=1000000', '/c?id=12345678901234567890', '/c?id=true', '/c?id=x%20y%26z', '/c?id=%C3%A9', '/c?id=..x%2F'],
    );
  });

  it('skips dot-segment values and counts them; dots inside a name are kept', () => {
    const text = '[{"a":".."},{"a":"."},{"a":"..\\/x"},{"a":"x\\\\.."},{"a":"a..b"},{"a":"..."}]';
    const p = planCalls(text, scanItemTable(text)!, [rule(0, '/u/{a}')], new Set(['a']));
    assert.deepEqual(
      p.calls.map((c) => c.path),
      ['/u/a..b', '/u/%2E%2E%2E'],
    );
    assert.equal(p.dotSegments, 4);
  });

  it('skips missing, null, object and array values', () => {
    const p = plan('[{},{"a":null},{"a":{}},{"a":[]},{"b":1}]', [rule(0, '/u/{a}')]);
    assert.deepEqual(p.urls, []);
    assert.deepEqual(p.callOf, [-1, -1, -1, -1, -1]);
  });

  it('needs every placeholder of a path; the last duplicate key wins', () => {
    const p = plan('[{"a":1},{"a":1,"b":2},{"a":1,"a":3,"b":2}]', [rule(0, '/x/{a}/y/{b}')]);
    assert.deepEqual(p.urls, ['http://127.0.0.1:9000/x/1/y/2', 'http://127.0.0.1:9000/x/3/y/2']);
    assert.deepEqual(p.callOf, [-1, 0, 1]);
  });

  it('does not resolve inherited names such as constructor', () => {
    assert.deepEqual(plan('{"a":1}', [rule(0, '/x/{constructor}')]).urls, []);
  });

  it('stops at maxCalls distinct URLs: pairs needing a new URL are skipped and counted, known URLs still resolve', () => {
    const p = plan('[{"a":1},{"a":2},{"a":3},{"a":1},{"a":3}]', [rule(0, '/u/{a}'), rule(1, '/v/{a}')], 3);
    assert.deepEqual(p.urls, ['http://127.0.0.1:9000/u/1', 'http://127.0.0.1:9000/v/1', 'http://127.0.0.1:9000/u/2']);
    assert.deepEqual(p.callOf, [0, 1, 2, -1, -1, -1, 0, 1, -1, -1]);
    assert.equal(p.overLimit, 5);
  });

  it('a batched rule plans its values; their URLs, read later, are the per-value ones; dot-segments skipped', () => {
    const batched: CompiledMappingRule = {
      ...rule(0, '/u/{a}?v=1'),
      batch: compileBatch({ path: '/u?ids={values}', separator: ',', key: 'id', max: 10 }),
    };
    const text = '[{"a":"x y"},{"a":".."},{"a":7},{"a":"x y"},{"constructor":1}]';
    const p = planCalls(text, scanItemTable(text)!, [batched], new Set(['a']));
    assert.deepEqual(
      p.calls.map((c) => c.value),
      ['x y', '7'],
    );
    assert.deepEqual(
      p.calls.map((c) => [c.path, c.url]),
      [
        ['/u/x%20y?v=1', 'http://127.0.0.1:9000/u/x%20y?v=1'],
        ['/u/7?v=1', 'http://127.0.0.1:9000/u/7?v=1'],
      ],
    );
    assert.deepEqual([...p.callOf], [0, -1, 1, 0, -1]);
    assert.equal(p.dotSegments, 1);
  });

  it('MAX_MAPPING_CALLS_PER_RESPONSE is the default limit', () => {
    const text = `[${Array.from({ length: MAX_MAPPING_CALLS_PER_RESPONSE + 2 }, (_, i) => `{"a":${i}}`).join(',')}]`;
    const p = plan(text, [rule(0, '/u/{a}')]);
    assert.equal(p.urls.length, MAX_MAPPING_CALLS_PER_RESPONSE);
    assert.equal(p.overLimit, 2);
  });
});
