/**
 * Reads a configuration file: YAML parsed with positions kept, `${NAME}` / `${NAME:-default}`
 * substituted from the environment (docs/design-decisions.md), and a `locate(path)` that turns a schema path
 * into a line and column for `FILE:LINE:COL` problems.
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, type Document, type Node } from 'yaml';
import { substituteEnv } from './env-substitution.js';
import type { ConfigPath, EnvValue, ParsedConfig } from './parsed.js';
import type { Problem } from './problems.js';
import {
  aliasSlips,
  duplicateKeySlips,
  findExcessNesting,
  MAX_NESTING,
  overIndentedKey,
  type Slip,
} from './yaml-guards.js';
import { parseYamlDocument } from './yaml-document.js';
import { readPlainYaml } from './plain-yaml.js';

export type { ConfigPath, EnvValue, ParsedConfig } from './parsed.js';

/** Largest configuration file read. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;

/** Reads and parses `file`; a missing or unreadable file is a single problem at 1:1. */
export function parseConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): ParsedConfig {
  const text = readConfigText(file);
  return typeof text === 'string' ? parseConfigText(text, file, env) : text;
}

/** The text of `file`, or what stops it being read as a single problem at 1:1. */
export function readConfigText(file: string): string | ParsedConfig {
  let text: string;
  try {
    // Checked before reading: a configuration is small, and the whole file is held in memory.
    if (statSync(file).size > MAX_FILE_BYTES)
      return unparsable(
        file,
        `the file is larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB; a gateway configuration is far smaller`,
      );
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      return unparsable(
        file,
        `file not found: ${resolve(file)}`,
        'write one with "portico init", or name another with --config FILE',
      );
    return unparsable(file, `cannot read file (${(err as Error).message})`);
  }
  return text;
}

/** Line and column of an offset in the text `lineCounter` has counted. */
type At = (offset: number | undefined) => { line: number; col: number };

/** Parses configuration text; `file` only names it in problems. */
export function parseConfigText(text: string, file: string, env: NodeJS.ProcessEnv = process.env): ParsedConfig {
  return plainConfig(text, file) ?? parseWithParser(text, file, env);
}

/** The same with the YAML parser, whatever the text (the reference plain-yaml.test.ts compares with). */
export function parseWithParser(text: string, file: string, env: NodeJS.ProcessEnv = process.env): ParsedConfig {
  const lineCounter = new LineCounter();
  const problems: Problem[] = [];
  const at: At = (offset) => {
    const pos = lineCounter.linePos(offset ?? 0);
    return { line: pos.line, col: pos.col };
  };
  const slip = (s: Slip) =>
    problems.push({ file, ...at(s.offset), message: s.message, ...(s.hint ? { hint: s.hint } : {}) });

  // Measured on tokens before any tree exists: the tree builders recurse once per level.
  const tooDeep = findExcessNesting(text);
  if (tooDeep !== undefined) {
    lineCounter.addNewLine(0);
    for (let i = text.indexOf('\n'); i !== -1 && i < tooDeep; i = text.indexOf('\n', i + 1))
      lineCounter.addNewLine(i + 1);
    slip({
      offset: tooDeep,
      message: `nesting deeper than ${MAX_NESTING} levels (lists and mappings inside each other)`,
      hint: 'a gateway configuration needs fewer than 10; check for a runaway [ or {',
    });
    return unparsed(file, problems, at(tooDeep));
  }

  const doc = parseYamlDocument(text, lineCounter);
  syntaxProblems(doc, text, lineCounter, { file, problems, at, slip });
  const wholeEnvPaths: ConfigPath[] = [];
  const envValues: EnvValue[] = [];
  let value: unknown;
  if (problems.length === 0) {
    // A missing variable is reported, then validation goes on so that every problem shows at once.
    substituteEnv(doc.contents, env, (node, message) => problems.push({ file, ...at(node.range?.[0]), message }), {
      wholeEnvPaths,
      envValues,
    });
    try {
      // Expansion was bounded above; the library's own alias rule would refuse legitimate reuse.
      value = doc.toJS({ maxAliasCount: -1 }) as unknown;
    } catch (err) {
      problems.push({ file, ...at(0), message: `YAML: ${(err as Error).message}` });
    }
  }
  return { file, value, problems, wholeEnvPaths, envValues, ...locators(doc, at) };
}

/**
 * A file within the plain subset (config/plain-yaml.ts), read without the YAML parser: most of a
 * large configuration's load went to the parser keeping every node's position, which only a
 * problem needs, and plain-yaml.ts finds positions on demand, where the parser would put them.
 * A file with `$` is left to the parser: substitution needs to know which values were unquoted.
 * Such a file has no syntax slip to report (the reader refuses duplicate keys, aliases, and
 * nesting past MAX_NESTING), and no environment value.
 */
function plainConfig(text: string, file: string): ParsedConfig | undefined {
  if (text.includes('$')) return undefined;
  const doc = readPlainYaml(text);
  if (doc === undefined) return undefined;
  return {
    file,
    value: doc.value,
    problems: [],
    wholeEnvPaths: [],
    envValues: [],
    locate: doc.locate,
    locateKey: doc.locateKey,
    keysBefore: doc.keysBefore,
  };
}

/** Where the syntax checks report: the file's problems, and how offsets become positions. */
interface SyntaxReport {
  readonly file: string;
  readonly problems: Problem[];
  readonly at: At;
  readonly slip: (s: Slip) => void;
}

/** The parser's indentation errors, which a hint naming the column to use explains. */
const YAML_HINTS: readonly string[] = [
  'Sequence item without - indicator',
  'All sequence items must start at the same column',
  'All mapping items must start at the same column',
];

/**
 * What to check on the line at `offset`: the column the key on the line above starts in (after
 * its "- "), which a key of the same item shares; a new list item starts with "- ".
 */
function indentationHint(message: string, text: string, lineCounter: LineCounter, offset: number): string {
  const { line } = lineCounter.linePos(offset);
  if (message === YAML_HINTS[1]) return `line up the "- " on line ${line} with the "- " of the list's first item`;
  const lines = text.split('\n');
  let above = line - 2;
  while (above >= 0 && lines[above]!.trim() === '') above--;
  const previous = above >= 0 ? /^(\s*(?:-\s+)?)\S/.exec(lines[above]!) : null;
  const column = previous === null ? 1 : previous[1]!.length + 1;
  return `check the indentation of line ${line}: a key of the same item starts in column ${column}, like the one on line ${above + 1}; a new list item starts with "- "`;
}

/**
 * The parser's errors, each explained by the slip that usually causes it when one is found; then,
 * on a document without errors, duplicate keys and aliases.
 */
function syntaxProblems(doc: Document, text: string, lineCounter: LineCounter, report: SyntaxReport): void {
  const { file, problems, at, slip } = report;
  const explained = doc.errors.map((e) => overIndentedKey(text, e, lineCounter.lineStarts));
  const shown = explained.find((s) => s !== undefined);
  if (shown) slip(shown);
  doc.errors.forEach((e, i) => {
    // One over-indented key makes several parser errors; its explanation replaces them all.
    if (
      shown === undefined ||
      (explained[i] === undefined && e.code !== 'BLOCK_AS_IMPLICIT_KEY' && e.code !== 'MULTILINE_IMPLICIT_KEY')
    ) {
      const message = e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
      const hint = YAML_HINTS.includes(message) ? indentationHint(message, text, lineCounter, e.pos[0]) : undefined;
      problems.push({ file, ...at(e.pos[0]), message: `YAML: ${message}`, ...(hint === undefined ? {} : { hint }) });
    }
  });
  if (problems.length === 0) {
    const lineOf = (offset: number) => lineCounter.linePos(offset).line;
    for (const s of duplicateKeySlips(doc, lineOf)) slip(s);
  }
  if (problems.length === 0) for (const s of aliasSlips(doc)) slip(s);
}

/** `locate`, `locateKey` and `keysBefore` over the parsed document. */
function locators(doc: Document, at: At): Pick<ParsedConfig, 'locate' | 'locateKey' | 'keysBefore'> {
  const nodeAt = (path: ConfigPath): Node | undefined => {
    let node: unknown = doc.contents;
    let found = node as Node | undefined;
    for (const key of path) {
      if (!isMap(node) && !isSeq(node)) break;
      node = node.get(key, true);
      if (node === undefined) break;
      found = node as Node;
    }
    return found;
  };
  return {
    locate: (path) => at(nodeAt(path)?.range?.[0]),
    locateKey: (path, key) => {
      const map = nodeAt(path);
      if (isMap(map)) {
        const pair = map.items.find((p) => isScalar(p.key) && p.key.value === key);
        if (pair && isScalar(pair.key)) return at(pair.key.range?.[0]);
      }
      return at(map?.range?.[0]);
    },
    keysBefore: (path, key) => {
      const map = nodeAt(path);
      if (!isMap(map)) return [];
      const keys = map.items.map((p) => (isScalar(p.key) ? String(p.key.value) : ''));
      const end = keys.indexOf(key);
      return keys.slice(0, end === -1 ? 0 : end).reverse();
    },
  };
}

/** A file that is not data: its problems, every path located at `origin`. */
function unparsed(file: string, problems: Problem[], origin: { line: number; col: number }): ParsedConfig {
  return {
    file,
    value: undefined,
    problems,
    wholeEnvPaths: [],
    envValues: [],
    locate: () => origin,
    locateKey: () => origin,
    keysBefore: () => [],
  };
}

function unparsable(file: string, message: string, hint?: string): ParsedConfig {
  const origin = { line: 1, col: 1 };
  return unparsed(file, [{ file, ...origin, message, ...(hint === undefined ? {} : { hint }) }], origin);
}
