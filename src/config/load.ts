/**
 * Reads a configuration file: YAML parsed with positions kept, `${NAME}` / `${NAME:-default}`
 * substituted from the environment (DECISIONS.md), and a `locate(path)` that turns a schema path
 * into a line and column for `FILE:LINE:COL` problems.
 */
import { readFileSync } from 'node:fs';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Node } from 'yaml';
import type { Problem } from './problems.js';

export type ConfigPath = readonly (string | number)[];

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
  /** Line and column of the key `key` inside the map at `path` (for unknown-key problems). */
  locateKey(path: ConfigPath, key: string): { line: number; col: number };
}

const ENV_REF = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Reads and parses `file`; a missing or unreadable file is a single problem at 1:1. */
export function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): ParsedConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : `cannot read file (${(err as Error).message})`;
    return unparsable(file, reason);
  }
  return parseConfigText(text, file, env);
}

/** Parses configuration text; `file` only names it in problems. */
export function parseConfigText(text: string, file: string, env: NodeJS.ProcessEnv = process.env): ParsedConfig {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const problems: Problem[] = [];
  const at = (offset: number | undefined) => {
    const pos = lineCounter.linePos(offset ?? 0);
    return { line: pos.line, col: pos.col };
  };
  for (const e of doc.errors) {
    problems.push({ file, ...at(e.pos[0]), message: `YAML: ${e.message.split('\n')[0]}` });
  }
  const syntaxOk = problems.length === 0;
  const wholeEnvPaths: ConfigPath[] = [];
  // A missing variable is reported, then validation goes on so that every problem shows at once.
  if (syntaxOk) substituteEnv(doc.contents, env, (node, message) => problems.push({ file, ...at(node.range?.[0]), message }), wholeEnvPaths);

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
    file,
    value: syntaxOk ? (doc.toJS({ maxAliasCount: 100 }) as unknown) : undefined,
    problems,
    wholeEnvPaths,
    locate: (path) => at(nodeAt(path)?.range?.[0]),
    locateKey: (path, key) => {
      const map = nodeAt(path);
      if (isMap(map)) {
        const pair = map.items.find((p) => isScalar(p.key) && p.key.value === key);
        if (pair && isScalar(pair.key)) return at(pair.key.range?.[0]);
      }
      return at(map?.range?.[0]);
    },
  };
}

function unparsable(file: string, message: string): ParsedConfig {
  const origin = { line: 1, col: 1 };
  return { file, value: undefined, problems: [{ file, ...origin, message }], wholeEnvPaths: [], locate: () => origin, locateKey: () => origin };
}

/**
 * Replaces `${NAME}` and `${NAME:-default}` in every string scalar; `$$` is a literal `$`.
 * Substituted text is kept exactly as it came from the environment (a secret with ` #`, quotes or
 * only digits stays that text); the paths of unquoted whole-value references are recorded so that
 * validation can read them as numbers or booleans where the schema asks for one.
 */
function substituteEnv(root: unknown, env: NodeJS.ProcessEnv, report: (node: Node, message: string) => void, wholeEnvPaths: ConfigPath[]): void {
  visit(root as Node, {
    Scalar(_key, node, ancestors) {
      if (typeof node.value !== 'string' || !node.value.includes('$')) return;
      if (node.type === 'PLAIN' && WHOLE_REF.test(node.value)) {
        const path = valuePath(ancestors, node);
        if (path !== undefined) wholeEnvPaths.push(path);
      }
      node.value = node.value.replace(ENV_REF, (match, name: string | undefined, fallback: string | undefined) => {
        if (match === '$$') return '$';
        const value = env[name!];
        if (value !== undefined && (value !== '' || fallback === undefined)) return value;
        if (fallback !== undefined) return fallback;
        report(node, `environment variable ${name} is not set (write \${${name}:-default} to give a default)`);
        return '';
      });
    },
  });
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
