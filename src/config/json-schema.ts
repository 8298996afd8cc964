/**
 * The JSON Schema dialect of `request.schema`: the schema read (an inline object, or a JSON file)
 * and compiled with ajv, draft-07 by default, draft 2020-12 when the schema's `$schema` says so,
 * formats from ajv-formats. Validation compiles it to report a bad schema with its line; the
 * request-schema guard (layers/json-schema.ts) compiles it again with the same instances.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, resolve } from 'node:path';
import type { Ajv, Options, ValidateFunction } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { FormatsPlugin } from 'ajv-formats';

const OPTIONS: Options = { allErrors: true, strict: false, validateFormats: true };
let draft7: Ajv | undefined;
let draft2020: Ajv2020 | undefined;

/**
 * ajv is loaded with the first schema compiled, not with this module: a configuration without
 * `request.schema` never loads it (ajv and ajv-formats: 117 files, about 1.3 MB of heap).
 */
const requireModule = createRequire(import.meta.url);
function newValidator(wants2020: boolean): Ajv | Ajv2020 {
  const ajv = wants2020
    ? new (requireModule('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js')).Ajv2020(OPTIONS)
    : new (requireModule('ajv') as typeof import('ajv')).Ajv(OPTIONS);
  // ajv-formats is CommonJS: its export is the plugin, or holds it as `default`.
  const formats = requireModule('ajv-formats') as FormatsPlugin & { default?: FormatsPlugin };
  (formats.default ?? formats)(ajv);
  return ajv;
}

/** The schema of `request.schema`: an inline object, or the JSON file a string names (relative to `baseDir`). */
export function readSchema(source: string | Readonly<Record<string, unknown>>, baseDir: string): unknown {
  if (typeof source !== 'string') return source;
  const file = isAbsolute(source) ? source : resolve(baseDir, source);
  return JSON.parse(readFileSync(file, 'utf8')) as unknown;
}

/** Compiles `schema` with ajv; throws with ajv's message when it is not a valid JSON Schema. */
export function compileJsonSchema(schema: unknown): ValidateFunction {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    throw new Error('a JSON Schema must be an object');
  const wants2020 = String((schema as { $schema?: unknown }).$schema ?? '').includes('2020-12');
  const ajv = wants2020 ? (draft2020 ??= newValidator(true) as Ajv2020) : (draft7 ??= newValidator(false) as Ajv);
  // A schema with an $id can be compiled once per ajv instance; reloads recompile the same file.
  const id = (schema as { $id?: unknown }).$id;
  if (typeof id === 'string') ajv.removeSchema(id);
  return ajv.compile(schema);
}
