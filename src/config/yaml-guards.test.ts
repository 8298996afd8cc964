import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LineCounter, parseDocument } from 'yaml';
import { aliasSlips, duplicateKeySlips, findExcessNesting, MAX_NESTING } from './yaml-guards.js';
import { loadConfigText } from './load.js';
import { formatProblem } from './problems.js';

const ROUTE = '  - { method: GET, route: /a, service: localhost:3000, path: /a }\n';

function problems(yaml: string): string[] {
  const r = loadConfigText(yaml, 'g.yaml', {});
  return r.ok ? [] : r.problems.map(formatProblem);
}

function blockMapping(depth: number): string {
  const lines = ['routes: []', 'config:'];
  for (let i = 0; i < depth; i++) lines.push(`${'  '.repeat(i + 1)}k${i}:`);
  return `${lines.join('\n')} 1\n`;
}

describe('nesting depth, measured before parsing', () => {
  it('stops a flow list 100,000 deep at the first bracket past the limit, fast', () => {
    const text = `routes: []\nconfig:\n  x: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`;
    const started = performance.now();
    const offset = findExcessNesting(text);
    assert.ok(performance.now() - started < 500);
    // "config" and "x" are two block levels; the brackets add the rest.
    assert.equal(offset, text.indexOf('[[') + MAX_NESTING - 2);
    assert.deepEqual(problems(text), [
      `g.yaml:3:${6 + MAX_NESTING - 2}: nesting deeper than ${MAX_NESTING} levels (lists and mappings inside each other) (a gateway configuration needs fewer than 10; check for a runaway [ or {)`,
    ]);
  });

  it('reports a block mapping 3,000 deep at the first key past the limit', () => {
    const [line] = problems(blockMapping(3_000));
    assert.match(
      line!,
      new RegExp(`^g\\.yaml:${MAX_NESTING + 2}:${2 * MAX_NESTING + 1}: nesting deeper than ${MAX_NESTING} levels`),
    );
  });

  it('counts "- " items on one line, and accepts the limit itself', () => {
    assert.equal(findExcessNesting(`${'- '.repeat(MAX_NESTING)}x\n`), 2 * MAX_NESTING);
    assert.equal(findExcessNesting(`${'- '.repeat(MAX_NESTING - 1)}x\n`), undefined);
    assert.equal(findExcessNesting(blockMapping(MAX_NESTING - 2)), undefined);
  });

  it('does not count brackets in quoted text, comments or block scalars, nor block scalar indentation', () => {
    const stairs = Array.from({ length: 100 }, (_, i) => `${' '.repeat(4 + i)}step ${i} [`).join('\n');
    const text = `routes: []\nconfig:\n  a: "${'['.repeat(200)}"\n  b: '${'{'.repeat(200)}'\n  # ${'['.repeat(200)}\n  c: |\n${stairs}\n  d: 1\n`;
    assert.equal(findExcessNesting(text), undefined);
  });
});

describe('aliases', () => {
  const bomb = ['routes: []', 'config:', '  x:', '    a: &a [x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 10; i++) {
    const name = String.fromCharCode(97 + i);
    const prev = String.fromCharCode(96 + i);
    bomb.push(`    ${name}: &${name} [${Array(9).fill(`*${prev}`).join(', ')}]`);
  }

  it('an alias bomb is located at the alias that crosses the limit, without expanding it', () => {
    const started = performance.now();
    const out = problems(`${bomb.join('\n')}\n`);
    assert.ok(performance.now() - started < 1_000);
    assert.equal(out.length, 1);
    assert.match(out[0]!, /^g\.yaml:9:\d+: aliases expand too much \(more than 100000 values once expanded\)/);
  });

  it('an alias with no anchor, or inside its own anchor, is located', () => {
    assert.deepEqual(problems('routes: []\nconfig:\n  port: *nope\n'), [
      'g.yaml:3:9: alias *nope names no anchor: write &nope on a value above it',
    ]);
    const text = 'a: &a [1, *a]\n';
    const lc = new LineCounter();
    const slips = aliasSlips(parseDocument(text, { lineCounter: lc }));
    assert.deepEqual(
      slips.map((s) => [s.offset, s.message]),
      [[10, 'alias *a is inside the value it names (&a), which would repeat forever']],
    );
  });

  it("reusing one anchor in many routes is fine (the parser's own rule refused 101 uses)", () => {
    const routes = Array.from(
      { length: 150 },
      (_, i) => `  - { method: GET, route: /r${i}, service: *svc, path: /a }`,
    ).join('\n');
    const text = `routes:\n  - { method: GET, route: /first, service: &svc localhost:3000, path: /a }\n${routes}\n`;
    const ok = loadConfigText(text, 'g.yaml', {});
    assert.ok(ok.ok, ok.ok ? '' : ok.problems.map(formatProblem).join('\n'));
    assert.equal(ok.config.routes.length, 151);
  });
});

describe('duplicate keys', () => {
  const lineOf = (text: string) => (offset: number) => text.slice(0, offset).split('\n').length;

  it('several keys repeated in a list item: one problem, at the line that should start a new item', () => {
    const text = `routes:\n${ROUTE.replace('{ ', '').replace(' }', '').replace(/, /g, '\n    ')}    method: POST\n    route: /b\n`;
    const slips = duplicateKeySlips(parseDocument(text, { uniqueKeys: false }), lineOf(text));
    assert.equal(slips.length, 1);
    assert.equal(
      slips[0]!.message,
      'routes[0]: "method", "route" appear twice in one list item (from line 2 and again from line 6)',
    );
    assert.equal(slips[0]!.hint, 'if line 6 starts a new item, write "- " before "method"');
  });

  it('an outdented key names both lines and the key it may belong under', () => {
    const text = 'config:\n  mappingCache:\n  enabled: true\n  circuitBreaker:\n  enabled: true\n';
    assert.deepEqual(problems(text), [
      'g.yaml:5:3: config: key "enabled" is written twice, on lines 3 and 5 (check the indentation of line 5: "enabled" may belong under "circuitBreaker:" on line 4)',
    ]);
  });
});
