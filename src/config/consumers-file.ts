/**
 * The consumers file (`config.consumersFile`, docs/consumers.md): a YAML file with the same
 * `consumers:` list the configuration may hold, read at load and again whenever it changes, on its
 * own, without the rest of the configuration. Its problems name its own FILE:LINE:COL.
 *
 * Large key stores are read without the YAML parser that keeps every node's position: a file named
 * `*.json` with `JSON.parse` (and, when it has a problem to locate, by the YAML parser), any other
 * with the plain-YAML reader (./plain-yaml.ts), which keeps positions of its own, when the text is
 * within what that reader understands. Only YAML beyond that subset, or with a `${NAME}` to
 * substitute, is read by the YAML parser.
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConsumersFileSchema, type ConsumerConfig } from './schema.js';
import { parseConfigText, type ParsedConfig } from './parse.js';
import { readPlainYaml } from './plain-yaml.js';
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
  const fast = isJson ? readJsonFast(text) : undefined;
  if (fast !== undefined) return { ok: true, consumers: fast };
  // Plain YAML is read with its positions by the plain reader; other YAML, and JSON with a problem
  // to locate, by the YAML parser (JSON is YAML).
  const parsed = (!isJson && plainParsed(text, file)) || parseConfigText(text, file, env);
  if (parsed.problems.length > 0 || parsed.value === undefined) return { ok: false, problems: parsed.problems };
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
 * A valid JSON file's consumers, without the YAML parser (which keeps every node's position, and
 * costs far more on 100,000 consumers); undefined when the text needs it: a problem to locate, or
 * `${NAME}` (or `$$`) to substitute.
 */
function readJsonFast(text: string): ConsumerConfig[] | undefined {
  if (text.includes('$')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
  const result = ConsumersFileSchema.safeParse(value);
  if (!result.success) return undefined;
  let valid = true;
  consumerListRules(result.data.consumers, () => (valid = false));
  return valid ? result.data.consumers : undefined;
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
