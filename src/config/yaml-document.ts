/**
 * `parseDocument` of the YAML library, with one change. The library decodes a double-quoted scalar one character at a time into a string built by
 * `+=`, which holds tens of bytes per character until it is flattened: a 10 MB value in double
 * quotes took over 300 MB and a second. Long double-quoted scalars on one line are decoded here
 * instead, in slices, and handed to the composer as the single-quoted scalar of the same value,
 * which it reads with one `slice`. The value is the one the library would give; what differs is
 * only the scalar's recorded quoting and where its range ends, which nothing reads. A scalar with
 * a line break, an escape the library would refuse, or a decoded line break (which single quotes
 * would fold) is left to the library, which reports or folds it as before.
 */
import { Composer, CST, Parser, YAMLParseError, type Document, type LineCounter } from 'yaml';

/** Shorter scalars are decoded fast enough by the library. */
const LONG_SCALAR = 1024;

/** YAML 1.2 escapes of double-quoted scalars (5.7), and the hex ones by their digit count. */
const ESCAPES: Readonly<Record<string, string>> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  N: '\u0085',
  _: '\u00a0',
  L: '\u2028',
  P: '\u2029',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
  '\t': '\t',
};
const HEX_DIGITS: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

/**
 * The one document of `text`, as the library's `parseDocument(text, { lineCounter, prettyErrors:
 * false, uniqueKeys: false })` gives it (a second document is an error). Duplicate keys are left
 * to the caller, which can name both lines and the likely slip (./yaml-guards.ts).
 */
export function parseYamlDocument(text: string, lineCounter: LineCounter): Document {
  const parser = new Parser(lineCounter.addNewLine);
  const composer = new Composer({ prettyErrors: false, uniqueKeys: false });
  let doc: Document | undefined;
  for (const next of composer.compose(rewritten(parser.parse(text)), true, text.length)) {
    if (doc === undefined) doc = next;
    else {
      const at = next.range.slice(0, 2) as [number, number];
      doc.errors.push(new YAMLParseError(at, 'MULTIPLE_DOCS', 'Source contains multiple documents'));
      break;
    }
  }
  // compose(..., forceDoc = true) yields a document even for empty text.
  return doc!;
}

function* rewritten(tokens: Iterable<CST.Token>): Generator<CST.Token> {
  for (const token of tokens) {
    fastQuotedScalars(token);
    yield token;
  }
}

/** Rewrites the long one-line double-quoted scalars of a CST document token in place. */
function fastQuotedScalars(token: CST.Token): void {
  if (token.type !== 'document') return;
  CST.visit(token, (item) => {
    for (const scalar of [item.key, item.value]) {
      if (scalar?.type === 'double-quoted-scalar' && scalar.source.length >= LONG_SCALAR) {
        const value = decodeOneLine(scalar.source);
        if (value !== undefined) {
          scalar.type = 'single-quoted-scalar';
          scalar.source = `'${value.replaceAll("'", "''")}'`;
        }
      }
    }
  });
}

/**
 * The value of a double-quoted scalar's source (quotes included) that is on one line, or
 * undefined when the library must decode it: a line break in the source or in the value, an
 * unknown escape, a bad code point, no closing quote.
 */
export function decodeOneLine(source: string): string | undefined {
  if (source.length < 2 || !source.endsWith('"') || /[\r\n]/.test(source)) return undefined;
  const inner = source.slice(1, -1);
  if (!inner.includes('\\')) return inner;
  const parts: string[] = [];
  let from = 0;
  for (let at = inner.indexOf('\\'); at !== -1; at = inner.indexOf('\\', from)) {
    parts.push(inner.slice(from, at));
    const code = inner[at + 1] ?? '';
    const digits = HEX_DIGITS[code];
    let decoded = ESCAPES[code];
    from = at + 2;
    if (digits !== undefined) {
      const hex = inner.slice(from, from + digits);
      const point = /^[0-9a-fA-F]+$/.test(hex) && hex.length === digits ? parseInt(hex, 16) : NaN;
      if (!(point <= 0x10ffff)) return undefined;
      decoded = String.fromCodePoint(point);
      from += digits;
    }
    if (decoded === undefined || decoded === '\n' || decoded === '\r') return undefined;
    parts.push(decoded);
  }
  parts.push(inner.slice(from));
  return parts.join('');
}
