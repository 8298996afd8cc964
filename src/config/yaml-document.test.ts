import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LineCounter, parseDocument, type Node } from 'yaml';
import { decodeOneLine, parseYamlDocument } from './yaml-document.js';

const PAD = 'p'.repeat(1100);

/** Double-quoted sources (between the quotes) long enough to take the fast path. */
const SOURCES = [
  `${PAD}`,
  `${PAD} it's \\"quoted\\" and ''twice''`,
  `${PAD}\\t\\0\\a\\b\\e\\f\\v\\N\\_\\L\\P\\ \\/\\\\\\\t|`,
  `${PAD}\\x41\\u00e9\\U0001F600 trailing spaces   `,
  `${PAD}\\n makes a line break`,
  `${PAD}\\q is no escape`,
  `${PAD}\\x4 short`,
  `${PAD}\\UFFFFFFFF out of range`,
];

function both(text: string) {
  const library = parseDocument(text, { lineCounter: new LineCounter(), prettyErrors: false, uniqueKeys: false });
  const ours = parseYamlDocument(text, new LineCounter());
  return { library, ours };
}

describe('parseYamlDocument', () => {
  for (const source of SOURCES) {
    it(`gives the library's value and errors: ${JSON.stringify(source.slice(PAD.length, PAD.length + 30))}`, () => {
      for (const text of [`a: "${source}"\n`, `- { "${source}": "${source}" }\n`]) {
        const { library, ours } = both(text);
        assert.deepEqual(ours.toJS(), library.toJS());
        assert.deepEqual(
          ours.errors.map((e) => e.code),
          library.errors.map((e) => e.code),
        );
        const start = (doc: typeof ours) => (doc.get('a', true) as Node | undefined)?.range?.[0];
        assert.equal(start(ours), start(library));
      }
    });
  }

  it('reports a second document, and gives a document for empty text', () => {
    assert.deepEqual(
      parseYamlDocument('a: 1\n---\nb: 2\n', new LineCounter()).errors.map((e) => e.code),
      ['MULTIPLE_DOCS'],
    );
    assert.equal(parseYamlDocument('', new LineCounter()).contents, null);
  });

  it('leaves to the library what it must decode itself', () => {
    assert.equal(decodeOneLine('"a\nb"'), undefined);
    assert.equal(decodeOneLine('"a\\nb"'), undefined);
    assert.equal(decodeOneLine('"a\\qb"'), undefined);
    assert.equal(decodeOneLine('"abc'), undefined);
    assert.equal(decodeOneLine('"abc\\"'), undefined);
    assert.equal(decodeOneLine('"a\\x41b"'), 'aAb');
  });
});
