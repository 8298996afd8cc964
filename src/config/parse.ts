/**
 * Reads a configuration file: YAML parsed with positions kept, `${NAME}` / `${NAME:-default}`
 * substituted from the environment (docs/design-decisions.md), and a `locate(path)` that turns a schema path
 * into a line and column for `FILE:LINE:COL` problems.
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { isMap, isPair, isScalar, isSeq, LineCounter, visit, type Document, type Node } from 'yaml';
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

export type ConfigPath = readonly (string | number)[];

/** A value `${NAME}` brought in from the environment. */
export interface EnvValue {
  readonly name: string;
  readonly value: string;
}

export interface ParsedConfig {
  readonly file: string;
  /** The plain data of the file, environment already substituted. `undefined` when not YAML. */
  readonly value: unknown;
  readonly problems: Problem[];
  /** Line and column of the node at `path`, or of its closest existing ancestor. */
  locate(path: ConfigPath): { line: number; col: number };
  /**
   * Paths of unquoted values that were one whole `${NAME}`: validation reads those as a number or
   * boolean where the schema wants one (`port: ${PORT:-8080}`), and as text everywhere else.
   */
  readonly wholeEnvPaths: readonly ConfigPath[];
  /** The values substituted from the environment, with their names (never repeated in a message). */
  readonly envValues: readonly EnvValue[];
  /** Line and column of the key `key` inside the map at `path` (for unknown-key problems). */
  locateKey(path: ConfigPath, key: string): { line: number; col: number };
  /** The keys written before `key` in the map at `path`, nearest first. */
  keysBefore(path: ConfigPath, key: string): string[];
}

/** Largest configuration file read. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;

const ENV_REF = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Reads and parses `file`; a missing or unreadable file is a single problem at 1:1. */
export function parseConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): ParsedConfig {
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
  return parseConfigText(text, file, env);
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

/**
 * Replaces `${NAME}` and `${NAME:-default}` in every string scalar; `$$` is a literal `$`.
 * Substituted text is kept exactly as it came from the environment (a secret with ` #`, quotes or
 * only digits stays that text); the paths of unquoted whole-value references are recorded so that
 * validation can read them as numbers or booleans where the schema asks for one, and the values
 * taken from the environment so that no message repeats them (hide-env-values.ts).
 */
function substituteEnv(
  root: unknown,
  env: NodeJS.ProcessEnv,
  report: (node: Node, message: string) => void,
  found: { wholeEnvPaths: ConfigPath[]; envValues: EnvValue[] },
): void {
  visit(root as Node, {
    Scalar(_key, node, ancestors) {
      if (typeof node.value !== 'string' || !node.value.includes('$')) return;
      if (node.type === 'PLAIN' && WHOLE_REF.test(node.value)) {
        const path = valuePath(ancestors, node);
        if (path !== undefined) found.wholeEnvPaths.push(path);
      }
      node.value = node.value.replace(ENV_REF, (match, name: string | undefined, fallback: string | undefined) => {
        if (match === '$$') return '$';
        const value = env[name!];
        if (value !== undefined && (value !== '' || fallback === undefined)) {
          found.envValues.push({ name: name!, value });
          return value;
        }
        if (fallback !== undefined) return fallback;
        // A default written in the file would put the secret in the file, the thing ${} avoids.
        const secret = SECRET_KEY.test(keyOf(ancestors, node) ?? '');
        report(
          node,
          `environment variable ${name} is not set (${secret ? `export ${name}=... before starting portico` : `export ${name}=..., or write \${${name}:-default} to give a default`})`,
        );
        // The reference stays as written: checks of the empty value would only echo this problem.
        return match;
      });
    },
  });
}

/** Keys whose values are credentials: no default is ever suggested for them. */
const SECRET_KEY = /secret|password|passwd|token|key|credential/i;

/** The name of the key whose value is `node`, if any. */
function keyOf(ancestors: readonly unknown[], node: unknown): string | undefined {
  const parent = ancestors[ancestors.length - 1];
  return isPair(parent) && parent.value === node && isScalar(parent.key) ? String(parent.key.value) : undefined;
}

const WHOLE_REF = /^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/;

/** The key path of a value node from its ancestors; undefined for a map key. */
function valuePath(ancestors: readonly unknown[], node: unknown): ConfigPath | undefined {
  const chain = [...ancestors, node];
  const path: (string | number)[] = [];
  for (let i = 0; i < chain.length - 1; i++) {
    const a = chain[i];
    const next = chain[i + 1];
    if (isSeq(a)) path.push(a.items.indexOf(next as never));
    else if (isPair(a)) {
      if (a.value !== next || !isScalar(a.key)) return undefined;
      path.push(String(a.key.value));
    }
  }
  return path;
}
