import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { readPlainYaml, type PlainDocument } from './plain-yaml.js';
import { parseWithParser, type ConfigPath } from './parse.js';

/** Every path of `value`'s mappings and lists, and one that does not exist below each. */
function pathsOf(value: unknown, path: ConfigPath = []): ConfigPath[] {
  const out: ConfigPath[] = [path, [...path, 'missing']];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...pathsOf(v, [...path, i])));
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...path, k]));
  return out;
}

/** The reader's value and positions are the YAML parser's, for every path and key of the file. */
function assertSameAsLibrary(text: string, doc: PlainDocument): void {
  const parsed = parseWithParser(text, 'consumers.yaml', {});
  assert.deepEqual(parsed.problems, [], text);
  assert.deepEqual(doc.value, parsed.value, text);
  for (const path of pathsOf(doc.value)) {
    assert.deepEqual(
      doc.locate(path),
      parsed.locate(path),
      `locate ${JSON.stringify(path)} in ${JSON.stringify(text)}`,
    );
    const parent = path.slice(0, -1);
    const key = String(path.at(-1) ?? 'missing');
    assert.deepEqual(doc.locateKey(parent, key), parsed.locateKey(parent, key), `locateKey ${JSON.stringify(path)}`);
    assert.deepEqual(doc.keysBefore(parent, key), parsed.keysBefore(parent, key), `keysBefore ${JSON.stringify(path)}`);
  }
}

const SAMPLE = `# consumers, written by the billing export
consumers:
  - id: acme
    keys:
      - sha256:0fdb3a1ea7192c4e9acbb2f130655e2c578ba4d266e38329d264ff6ff1bcecf8
      - "sha256:f9f9a85dcd97679226ba0a6825dd0c38d058ba4616c153bc21f07dc678df672a"
    claims: { customer: acme, tier: gold, email: "ops@acme.example" }
    plan: gold
  -   id: 'globex'
      keys: [sha256:99357dc95d84bcfcbf69dbaa241140a84b6b92e80dc43200999199156352ffd0]
      claims:
        customer: globex
        scopes: [read, write]
  - id: initech
    keys:
    - sha256:aa
    claims: {}
    note: 'a: b, c'
`;

/** A configuration as a generator writes one: flow routes with nested lists, numbers, booleans. */
const CONFIG = `config:
  port: 8080
  trustProxy: false
  upstreamTimeoutMs: 2500
routes:
  - { method: GET, route: "/e0/items", service: "127.0.0.1:9", path: "/e0/items", public: true }
  - { method: GET, route: "/p0/items/{id}", service: 'orders:8080', public: true, hosts: ["*.w0.example.com", t0.example.com] }
  - method: POST
    route: /s0/{rest}/*
    service: http://127.0.0.1:9
    public: true
    timeoutMs: 100
    tags: [a, { b: 1.5, c: [null, ~] }]
`;

describe('plain YAML reader', () => {
  it('reads the plain subset as the YAML parser does, and locates every path and key as it does', () => {
    const cases = [
      SAMPLE,
      'consumers: []\n',
      'consumers:\n- id: a\n  keys: []\n',
      '  consumers:\n    - id: a\n',
      'a:\n  b:\n    c: https://example.com/x\n  d: [a:b]\n',
      'list:\n  -\n    - x\n    - y\n  - z\n',
      'a: 1\nb: true\nc: null\nd: -2.5e3\ne: ~\nf: [+7, .5, 1., False, NULL]\n',
      'a: [b, [c]]\n',
      'a: "x, y"\nb: [ "x, y" ]\n',
      CONFIG,
    ];
    for (const text of cases) {
      const doc = readPlainYaml(text);
      assert.notEqual(doc, undefined, text);
      assertSameAsLibrary(text, doc!);
    }
  });

  it('leaves to the YAML parser whatever it does not fully understand', () => {
    const cases = [
      'a: 0x1f\n', // a hex number
      'a: 0o17\n', // an octal number
      'a: .inf\n',
      'a: .NaN\n',
      'a:\n', // null
      `a: ${'['.repeat(40)}${']'.repeat(40)}\n`, // nesting for the library's guard to report
      'a: b # comment\n',
      'a: &x b\nc: *x\n', // anchors and aliases
      'a: !!str b\n', // a tag
      'a: b\n  c\n', // a multi-line scalar
      'a: "b\\n"\n', // an escape
      "a: 'it''s'\n",
      'a: b\na: c\n', // a duplicate key
      '__proto__: { polluted: yes }\n',
      'a:\n\t- b\n', // a tab
      '---\na: b\n',
      'a: b\n---\nc: d\n', // a second document
      'a: {b: c,}\n', // a trailing comma
      'a: {b:c}\n',
      'a: | \n  text\n',
      'a: 2026-01-01\n',
      'a: b c\n', // a plain scalar with a space
      '"a": b\n',
      '? a\n: b\n',
      'a:\n  - b\n c: d\n', // a key at no level's column
      '',
      '# only a comment\n',
    ];
    for (const text of cases) assert.equal(readPlainYaml(text), undefined, JSON.stringify(text));
  });

  it('whatever it reads in a thousand mangled files is what the YAML parser reads, at the same positions', () => {
    // A seeded generator: the same files on every run.
    let seed = 38;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const inserts = [
      ' ',
      '  ',
      '\n',
      '-',
      ':',
      ': ',
      '#',
      ' #',
      ',',
      '[',
      ']',
      '{',
      '}',
      '"',
      "'",
      'x',
      '1',
      '&a',
      '*a',
      '!',
    ];
    let read = 0;
    for (let round = 0; round < 2000; round++) {
      let text = round % 2 === 0 ? SAMPLE : CONFIG;
      for (let edits = 1 + random(3); edits > 0; edits--) {
        const at = random(text.length);
        text =
          random(4) === 0
            ? text.slice(0, at) + text.slice(at + 1)
            : text.slice(0, at) + inserts[random(inserts.length)]! + text.slice(at);
      }
      const doc = readPlainYaml(text);
      if (doc === undefined) continue;
      read++;
      assertSameAsLibrary(text, doc);
    }
    assert.ok(read > 100, `only ${read} mangled files were within the subset`);
  });

  it('reads an unquoted scalar as the core schema of the YAML library does (property)', () => {
    const pieces = [
      '0',
      '1',
      '9',
      '-',
      '+',
      '.',
      'e',
      'E',
      'x',
      'o',
      '_',
      'a',
      't',
      'rue',
      'T',
      'F',
      'alse',
      'null',
      'N',
      'ULL',
      '~',
      '/',
      '*',
      'inf',
      'nan',
      ':',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 6 }), (chunks) => {
        const scalar = chunks.join('');
        for (const text of [`a: ${scalar}\n`, `a: [${scalar}]\n`, `a: { b: ${scalar} }\n`]) {
          const doc = readPlainYaml(text);
          if (doc !== undefined) assertSameAsLibrary(text, doc);
        }
      }),
      { numRuns: 3000, seed: 40 },
    );
  });
});
