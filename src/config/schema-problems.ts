/**
 * Schema issues as problems a person can act on: each names the key path, says what was
 * expected and what was found, and hints at the likely typo or indentation mistake.
 */
import type { z } from 'zod';
import { GatewayFileSchema } from './schema.js';
import { didYouMean, type Problem } from './problems.js';
import type { ConfigPath, ParsedConfig } from './parse.js';
import { formatPath, valueAt } from './raw-value.js';

type Path = readonly (string | number)[];

/**
 * Every schema issue as a problem, unknown keys first: a key misspelt is then reported once
 * (with its hint), not also as a required key that is missing.
 */
export function schemaProblems(given: readonly z.core.$ZodIssue[], raw: unknown, parsed: ParsedConfig): Problem[] {
  const issues = given.flatMap(
    (issue) => (issue.code === 'invalid_union' ? objectBranchIssues(issue) : undefined) ?? [issue],
  );
  const problems: Problem[] = [];
  const hinted = new Set<string>();
  for (const issue of issues) if (issue.code === 'unrecognized_keys') unknownKeys(issue, parsed, problems, hinted);
  for (const issue of issues)
    if (issue.code !== 'unrecognized_keys') schemaProblem(issue, raw, parsed, problems, hinted);
  return problems;
}

/** `hinted` collects the paths of the keys that an unknown key's hint names. */
function unknownKeys(
  issue: z.core.$ZodIssueUnrecognizedKeys,
  parsed: ParsedConfig,
  problems: Problem[],
  hinted: Set<string>,
): void {
  const path = issue.path as (string | number)[];
  const name = formatPath(path);
  for (const key of issue.keys) {
    const hint = unknownKeyHint(path, key, parsed);
    const near = hint === undefined ? didYouMean(key, knownKeys(path)) : undefined;
    if (near !== undefined) hinted.add(JSON.stringify([...path, near]));
    const familiar = FAMILIAR_KEYS[key.toLowerCase().replaceAll(/[_-]/g, '')];
    problems.push({
      file: parsed.file,
      ...parsed.locateKey(path, key),
      message: `${name ? `${name}: ` : ''}unknown key "${key}"`,
      ...(hint
        ? { hint }
        : near
          ? { hint: `did you mean "${near}"?` }
          : familiar
            ? { hint: `in Portico: ${familiar}` }
            : {}),
    });
  }
}

/**
 * Keys other gateways and JWT libraries use (lower case, without `_` and `-`), and where Portico
 * reads the same setting: the hint for an unknown key that is no near miss of a known one.
 */
const FAMILIAR_KEYS: Readonly<Record<string, string>> = {
  jwtsecret: 'config.auth.secret',
  hmacsecret: 'config.auth.secret',
  signingkey: 'config.auth.secret',
  jwksuri: 'config.auth.jwksUrl',
  jwksendpoint: 'config.auth.jwksUrl',
  iss: 'config.auth.issuer',
  aud: 'config.auth.audience',
  apikey: 'config.auth.apiKey, with the keys under consumers:',
  keyauth: 'config.auth.apiKey, with the keys under consumers:',
  upstream: 'a route\'s "service" (host:port or a name from upstreams:)',
  backend: 'a route\'s "service" and "path"',
  target: 'a route\'s "service" and "path"',
  url: 'a route\'s "service" and "path"',
  endpoint: 'a route\'s "route"',
  uri: 'a route\'s "route"',
};

function schemaProblem(
  issue: z.core.$ZodIssue,
  raw: unknown,
  parsed: ParsedConfig,
  problems: Problem[],
  hinted: ReadonlySet<string>,
): void {
  const path = issue.path as (string | number)[];
  const where = (p: ConfigPath) => ({ file: parsed.file, ...parsed.locate(p) });
  const name = formatPath(path);
  switch (issue.code) {
    case 'invalid_type': {
      const value = valueAt(raw, path);
      if (value === undefined) {
        missingKey(path);
      } else {
        const yaml11 =
          issue.expected === 'boolean' && typeof value === 'string' && /^(yes|no|on|off|y|n)$/i.test(value);
        problems.push({
          ...where(path),
          message: `${name}: expected ${describeExpected(issue.expected)}, got ${describeValue(value)}`,
          ...(yaml11 ? { hint: 'YAML 1.2 reads this as text: write true or false' } : {}),
        });
      }
      return;
    }
    case 'invalid_value': {
      const value = valueAt(raw, path);
      if (value === undefined) {
        missingKey(path);
        return;
      }
      const options = issue.values.map(String);
      const hint = typeof value === 'string' ? didYouMean(value, options) : undefined;
      problems.push({
        ...where(path),
        message: `${name}: ${JSON.stringify(value)} is not one of ${options.join(', ')}`,
        ...(hint ? { hint: `did you mean "${hint}"?` } : {}),
      });
      return;
    }
    case 'too_small':
      if (issue.origin === 'string') {
        // Empty text, or text shorter than the bound (a token of 16 characters or more): say which.
        const minimum = Number(issue.minimum);
        const length = String(valueAt(raw, path) ?? '').length;
        problems.push({
          ...where(path),
          message:
            minimum <= 1 || length === 0
              ? `${name}: must not be empty`
              : `${name}: must be at least ${minimum} characters long (got ${length})`,
        });
        return;
      }
      problems.push({
        ...where(path),
        message: `${name}: must be ${issue.inclusive ? 'at least' : 'greater than'} ${String(issue.minimum)}`,
      });
      return;
    case 'too_big':
      problems.push({
        ...where(path),
        message: `${name}: must be at most ${String(issue.maximum)}${issue.origin === 'string' ? ' characters long' : ''}`,
      });
      return;
    default:
      if (valueAt(raw, path) === undefined) missingKey(path);
      else problems.push({ ...where(path), message: `${name}: ${issue.message}` });
  }

  function missingKey(p: Path): void {
    if (hinted.has(JSON.stringify(p))) return;
    problems.push({
      ...where(p.slice(0, -1)),
      message: `${formatPath(p.slice(0, -1)) || 'file'}: missing required key "${String(p[p.length - 1])}"`,
    });
  }
}

/**
 * `true` or an object (`cache.redis`) given an object with one key wrong: the object branch's own
 * issues (that key, with its path) say more than the union's "Invalid input". Undefined when no
 * branch got past the value's own type.
 */
function objectBranchIssues(issue: z.core.$ZodIssueInvalidUnion): z.core.$ZodIssue[] | undefined {
  const { path } = issue;
  const branch = issue.errors.find((issues) => issues.length > 0 && issues.every((i) => i.path.length > 0));
  return branch?.map((i) => ({ ...i, path: [...path, ...i.path] }));
}

/**
 * A hint for a key that exists one level off: a key of a child object written at this level (an
 * outdented line; when several children have it, the one written nearest above wins), or a key
 * of the parent written here (an over-indented line).
 */
function unknownKeyHint(path: Path, key: string, parsed: ParsedConfig): string | undefined {
  // YAML 1.2 has no merge keys: "<<" is read as a key like any other.
  if (key === '<<') return 'YAML merge keys are not supported: write the keys out';
  const owners = childObjects(path).filter((c) => c.keys.includes(key));
  if (owners.length > 0) {
    const before = parsed.keysBefore(path, key);
    const owner =
      before.map((k) => owners.find((o) => o.name === k)).find((o) => o !== undefined) ??
      (owners.length === 1 ? owners[0] : undefined);
    if (owner) {
      const line = parsed.locateKey(path, owner.name).line;
      const where = before.includes(owner.name) ? ` on line ${line}` : '';
      return `did you mean ${owner.name}${owner.isList ? '[]' : ''}.${key}? check its indentation: it belongs under "${owner.name}:"${where}`;
    }
    return `did you mean ${owners.map((o) => `${o.name}${o.isList ? '[]' : ''}.${key}`).join(' or ')}? check its indentation`;
  }
  let parent = path.slice(0, -1);
  if (typeof path[path.length - 1] === 'number') parent = parent.slice(0, -1);
  if (path.length > 0 && knownKeys(parent).includes(key)) {
    return `did you mean ${formatPath([...parent, key])}? check its indentation: it is written one level too deep`;
  }
  return undefined;
}

/** The objects (or lists of objects) directly inside the object at `path`, with their keys. */
function childObjects(path: Path): { name: string; keys: string[]; isList: boolean }[] {
  const out: { name: string; keys: string[]; isList: boolean }[] = [];
  for (const name of knownKeys(path)) {
    const keys = knownKeys([...path, name]);
    if (keys.length > 0) out.push({ name, keys, isList: false });
    else {
      const itemKeys = knownKeys([...path, name, 0]);
      if (itemKeys.length > 0) out.push({ name, keys: itemKeys, isList: true });
    }
  }
  return out;
}

/** The keys the schema accepts for the object at `path` (for "did you mean" on unknown keys). */
function knownKeys(path: Path): string[] {
  let schema: unknown = GatewayFileSchema;
  for (const key of path) {
    schema = unwrap(schema);
    const def = (schema as { def?: { type?: string; shape?: Record<string, unknown>; element?: unknown } }).def;
    if (def?.type === 'array') schema = def.element;
    else if (def?.type === 'object' && typeof key === 'string') schema = def.shape?.[key];
    else return [];
  }
  const def = (unwrap(schema) as { def?: { shape?: Record<string, unknown> } }).def;
  return Object.keys(def?.shape ?? {});
}

function unwrap(schema: unknown): unknown {
  let s = schema as { def?: { type?: string; innerType?: unknown; options?: unknown[] } } | undefined;
  while (s?.def && ['optional', 'default', 'prefault', 'nullable'].includes(s.def.type ?? '')) {
    s = s.def.innerType as typeof s;
  }
  return s;
}

function describeExpected(expected: string): string {
  return expected === 'int'
    ? 'an integer'
    : expected === 'array'
      ? 'a list'
      : expected === 'object'
        ? 'a mapping'
        : `a ${expected}`;
}

function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `the string ${JSON.stringify(v)}`;
  return `${typeof v} ${String(v)}`;
}
