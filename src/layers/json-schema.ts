/**
 * A route's request JSON Schema (`request.schema`), compiled once per configuration when the
 * route's pipeline is built (the dialect and the compiler are config/json-schema.ts). Validation
 * reports every failure with its JSON pointer, at most `MAX_REPORTED`.
 */
import type { ErrorObject } from 'ajv';
import { compileJsonSchema } from '../config/json-schema.js';
import type { BodyValidator, SchemaFailure } from './types.js';

/** The errors a 400 lists: enough to fix a request, bounded for a hostile one. */
export const MAX_REPORTED = 10;

/** Compiles `schema`; throws with ajv's message when it is not a valid JSON Schema. */
export function compileBodySchema(schema: unknown): BodyValidator {
  const check = compileJsonSchema(schema);
  return {
    validate(value) {
      if (check(value)) return undefined;
      return (check.errors ?? []).slice(0, MAX_REPORTED).map(failure);
    },
  };
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
