/**
 * A plugin's options checked against the schema it declares, with problems worded and located
 * like the configuration's own: `FILE:LINE:COL`, the key path, and a did-you-mean for an unknown
 * key. Unknown keys are found by walking the schema's objects, so a plugin written with
 * `z.object` (which drops unknown keys silently) still gets a misspelt option reported.
 */
import type { z } from 'zod';
import { didYouMean } from '../config/problems.js';
import type { Problem } from '../config/types.js';
import type { PluginSpec } from '../config/schema.js';

type Path = (string | number)[];

/** The parsed options, or the problems of the written ones. */
export function checkOptions(
  spec: PluginSpec,
  index: number,
  schema: z.ZodType | undefined,
  file: string,
): { ok: true; options: unknown } | { ok: false; problems: Problem[] } {
  const at = (path: Path, message: string, hint?: string, key?: string): Problem => ({
    file,
    ...(spec.locate?.(path, key) ?? { line: 1, col: 1 }),
    message,
    ...(hint === undefined ? {} : { hint }),
  });
  const label = (path: readonly (string | number)[]) =>
    `plugins[${index}].options${path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('')}`;
  if (schema === undefined) {
    if (spec.options === undefined) return { ok: true, options: undefined };
    return {
      ok: false,
      problems: [at(['options'], `${label([])}: plugin "${spec.name}" takes no options`, 'remove options:')],
    };
  }
  const problems: Problem[] = [];
  // A key a hint names is not reported missing too: one typo, one problem.
  const hinted = new Set<string>();
  unknownKeys(schema, spec.options, [], (path, key, known) => {
    const near = didYouMean(key, known);
    if (near !== undefined) hinted.add(JSON.stringify([...path, near]));
    problems.push(
      at(
        ['options', ...path],
        `${label(path)}: unknown key "${key}"`,
        near === undefined
          ? `plugin "${spec.name}" takes ${known.join(', ') || 'no keys here'}`
          : `did you mean "${near}"?`,
        key,
      ),
    );
  });
  // An absent options: key reads as {}, so a schema of defaults needs nothing written.
  const result = schema.safeParse(spec.options ?? (isObject(schema) ? {} : undefined));
  if (!result.success)
    for (const issue of result.error.issues) {
      if (issue.code === 'unrecognized_keys') continue;
      const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
      const missing = issue.code === 'invalid_type' && valueAt(spec.options, path) === undefined;
      if (missing && hinted.has(JSON.stringify(path))) continue;
      const written = valueAt(spec.options, path);
      const near =
        issue.code === 'invalid_value' && typeof written === 'string'
          ? didYouMean(
              written,
              issue.values.filter((v): v is string => typeof v === 'string'),
            )
          : undefined;
      problems.push(
        at(
          ['options', ...path],
          `${label(path)}: ${missing ? `required (${issue.expected})` : issue.message}`,
          near === undefined ? undefined : `did you mean "${near}"?`,
        ),
      );
    }
  return problems.length === 0 && result.success ? { ok: true, options: result.data } : { ok: false, problems };
}

function valueAt(value: unknown, path: readonly (string | number)[]): unknown {
  let v = value;
  for (const key of path) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[key] : undefined;
  return v;
}

/** The schema's definition, read without importing zod's classes (the plugin may use another copy). */
function defOf(schema: unknown): {
  type?: string;
  shape?: Record<string, unknown>;
  innerType?: unknown;
  element?: unknown;
  catchall?: unknown;
} {
  return ((schema as { _zod?: { def?: unknown } })._zod?.def ?? {}) as ReturnType<typeof defOf>;
}

const WRAPPERS = new Set(['optional', 'default', 'prefault', 'nullable', 'readonly', 'catch', 'nonoptional']);

function unwrap(schema: unknown): ReturnType<typeof defOf> {
  let def = defOf(schema);
  while (def.type !== undefined && WRAPPERS.has(def.type) && def.innerType !== undefined) def = defOf(def.innerType);
  return def;
}

function isObject(schema: unknown): boolean {
  return unwrap(schema).type === 'object';
}

/** Calls `report` for every key of `value` that no object of the schema declares. */
function unknownKeys(
  schema: unknown,
  value: unknown,
  path: Path,
  report: (path: Path, key: string, known: string[]) => void,
): void {
  const def = unwrap(schema);
  if (def.type === 'object' && def.shape !== undefined && typeof value === 'object' && value !== null) {
    if (Array.isArray(value)) return;
    const known = Object.keys(def.shape);
    // z.looseObject or .catchall(...) takes other keys on purpose; z.strictObject's catchall is never.
    const takesOthers = def.catchall !== undefined && defOf(def.catchall).type !== 'never';
    for (const [key, v] of Object.entries(value)) {
      if (Object.hasOwn(def.shape, key)) unknownKeys(def.shape[key], v, [...path, key], report);
      else if (!takesOthers) report(path, key, known);
    }
  } else if (def.type === 'array' && Array.isArray(value)) {
    value.forEach((v: unknown, i) => unknownKeys(def.element, v, [...path, i], report));
  }
}
