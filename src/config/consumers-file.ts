/**
 * The consumers file (`config.consumersFile`, docs/consumers.md): a YAML file with the same
 * `consumers:` list the configuration may hold, read at load and again whenever it changes, on its
 * own, without the rest of the configuration. Its problems name its own FILE:LINE:COL.
 *
 * Large key stores are read without the YAML parser that keeps every node's position: a file named
 * `*.json` with `JSON.parse`, its problems located by a scan of the text (./json-locator.ts), any
 * other with the plain-YAML reader (./plain-yaml.ts), which keeps positions of its own, when the
 * text is within what that reader understands. Only YAML beyond that subset, a `${NAME}` to
 * substitute, or a JSON syntax error whose offset `JSON.parse` does not give, is read by the YAML
 * parser.
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConsumersFileSchema, type ConsumerConfig } from './schema.js';
import { parseConfigText, type ParsedConfig } from './parse.js';
import { readPlainYaml } from './plain-yaml.js';
import { jsonLocator, jsonSyntaxError } from './json-locator.js';
import { schemaProblems } from './schema-problems.js';
import { consumerListRules } from './consumer-rules.js';
import type { AddProblem, Problem } from './problems.js';
import type { ConsumerSpec } from './types.js';

/** Largest consumers file read: far above 100,000 consumers with a few keys each. */
export const MAX_CONSUMERS_FILE_BYTES = 256 * 1024 * 1024;

export type ConsumersRead = { ok: true; consumers: ConsumerConfig[] } | { ok: false; problems: Problem[] };

/** Reads and validates a consumers file; every problem comes back as data. */
export function readConsumersFile(file: string, env: NodeJS.ProcessEnv = process.env): ConsumersRead {
  let text: string;
  try {
    if (statSync(file).size > MAX_CONSUMERS_FILE_BYTES)
      return fileProblem(file, `the file is larger than ${MAX_CONSUMERS_FILE_BYTES / 1024 / 1024} MiB`);
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return fileProblem(
      file,
      code === 'ENOENT' ? `file not found: ${resolve(file)}` : `cannot read file (${code ?? 'error'})`,
    );
  }
  const isJson = file.endsWith('.json');
  // `${NAME}` (or `$$`) to substitute: the YAML parser reads it (JSON is YAML).
  const json = isJson && !text.includes('$') ? jsonParsed(text, file) : undefined;
  if (json !== undefined && 'ok' in json) return json;
  const parsed = json ?? ((!isJson && plainParsed(text, file)) || parseConfigText(text, file, env));
  if (parsed.problems.length > 0 || parsed.value === undefined) return { ok: false, problems: parsed.problems };
  return checkConsumers(parsed);
}

/** The schema and the rules over a file's data; problems located by `parsed` (only when there are some). */
function checkConsumers(parsed: ParsedConfig): ConsumersRead {
  const { file } = parsed;
  const problems: Problem[] = [];
  const result = ConsumersFileSchema.safeParse(parsed.value);
  if (!result.success) problems.push(...schemaProblems(result.error.issues, parsed.value, parsed));
  const at: AddProblem = (path, message, hint) =>
    problems.push({ file, ...parsed.locate(path), message, ...(hint ? { hint } : {}) });
  if (parsed.value !== null && typeof parsed.value === 'object' && 'consumers' in parsed.value)
    consumerListRules(parsed.value.consumers, at);
  if (problems.length > 0 || !result.success)
    return { ok: false, problems: problems.sort((a, b) => a.line - b.line || a.col - b.col) };
  return { ok: true, consumers: result.data.consumers };
}

/**
 * The text read by the plain-YAML reader, shaped as the YAML parser's answer; undefined when the
 * text needs that parser: `${NAME}` (or `$$`) to substitute, or YAML beyond the plain subset.
 */
function plainParsed(text: string, file: string): ParsedConfig | undefined {
  if (text.includes('$')) return undefined;
  const doc = readPlainYaml(text);
  if (doc === undefined) return undefined;
  const { value, locate, locateKey, keysBefore } = doc;
  return { file, value, problems: [], wholeEnvPaths: [], envValues: [], locate, locateKey, keysBefore };
}

/**
 * A JSON file read by `JSON.parse`, shaped as the YAML parser's answer, with positions found in
 * the text only for the problems there are (./json-locator.ts): the YAML parser keeps every node's
 * position, and took half a minute on 100,000 consumers. A syntax error is answered here when
 * `JSON.parse` says where it is; otherwise (undefined) the YAML parser reads the text to locate it.
 */
function jsonParsed(text: string, file: string): ParsedConfig | { ok: false; problems: Problem[] } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    const syntax = jsonSyntaxError(text, err as Error);
    if (syntax === undefined) return undefined;
    return { ok: false, problems: [{ file, line: syntax.line, col: syntax.col, message: `JSON: ${syntax.message}` }] };
  }
  return { file, value, problems: [], wholeEnvPaths: [], envValues: [], ...jsonLocator(text) };
}

function fileProblem(file: string, message: string): ConsumersRead {
  return { ok: false, problems: [{ file, line: 1, col: 1, message }] };
}

/** The consumers as the gateway keeps them: hashes in lower-case hex without their prefix, frozen. */
export function compileConsumers(list: readonly ConsumerConfig[]): readonly ConsumerSpec[] {
  return Object.freeze(
    list.map((c) =>
      Object.freeze({
        id: c.id,
        keyHashes: Object.freeze(c.keys.map((k) => k.slice('sha256:'.length).toLowerCase())),
        claims: Object.freeze({ ...c.claims }),
        plan: c.plan,
      }),
    ),
  );
}
