/**
 * A route's request JSON Schema (`request.schema`), compiled once with ajv when the configuration
 * loads: draft-07 by default, draft 2020-12 when the schema's `$schema` says so, formats from
 * ajv-formats. Validation reports every failure with its JSON pointer, at most `MAX_REPORTED`.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { Ajv, type ErrorObject, type Options } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';

/** The errors a 400 lists: enough to fix a request, bounded for a hostile one. */
export const MAX_REPORTED = 10;

export interface SchemaFailure {
  /** JSON pointer to the failing value (`/items/0/qty`; `` for the whole body). */
  readonly pointer: string;
  readonly message: string;
}

export interface BodyValidator {
  /** Undefined when `value` matches the schema, else its failures. */
  validate(value: unknown): readonly SchemaFailure[] | undefined;
}

const OPTIONS: Options = { allErrors: true, strict: false, validateFormats: true };
// ajv-formats is CommonJS: under Node's ESM loader its default import is the plugin or holds it.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  addFormatsModule) as unknown as FormatsPlugin;
let draft7: Ajv | undefined;
let draft2020: Ajv2020 | undefined;

/** The schema of `request.schema`: an inline object, or the JSON file a string names (relative to `baseDir`). */
export function readSchema(source: string | Readonly<Record<string, unknown>>, baseDir: string): unknown {
  if (typeof source !== 'string') return source;
  const file = isAbsolute(source) ? source : resolve(baseDir, source);
  return JSON.parse(readFileSync(file, 'utf8')) as unknown;
}

/** Compiles `schema`; throws with ajv's message when it is not a valid JSON Schema. */
export function compileBodySchema(schema: unknown): BodyValidator {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    throw new Error('a JSON Schema must be an object');
  const wants2020 = String((schema as { $schema?: unknown }).$schema ?? '').includes('2020-12');
  const ajv = wants2020
    ? (draft2020 ??= withFormats(new Ajv2020(OPTIONS)))
    : (draft7 ??= withFormats(new Ajv(OPTIONS)));
  // A schema with an $id can be compiled once per ajv instance; reloads recompile the same file.
  const id = (schema as { $id?: unknown }).$id;
  if (typeof id === 'string') ajv.removeSchema(id);
  const check = ajv.compile(schema);
  return {
    validate(value) {
      if (check(value)) return undefined;
      return (check.errors ?? []).slice(0, MAX_REPORTED).map(failure);
    },
  };
}

function withFormats<T extends Ajv | Ajv2020>(ajv: T): T {
  addFormats(ajv);
  return ajv;
}

function failure(e: ErrorObject): SchemaFailure {
  const missing = e.keyword === 'required' ? (e.params as { missingProperty?: string }).missingProperty : undefined;
  if (missing !== undefined) return { pointer: `${e.instancePath}/${escapePointer(missing)}`, message: 'is required' };
  const extra = e.keyword === 'additionalProperties' ? (e.params as { additionalProperty?: string }) : undefined;
  if (extra?.additionalProperty !== undefined)
    return { pointer: `${e.instancePath}/${escapePointer(extra.additionalProperty)}`, message: 'is not allowed' };
  return { pointer: e.instancePath, message: e.message ?? e.keyword };
}

/** RFC 6901: `~` and `/` in a key. */
function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}
