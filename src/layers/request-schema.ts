/**
 * Request validation: a route with `request.schema` checks its JSON body against the schema
 * before the backend is called, and answers 400 `GW_REQUEST_INVALID` with the failures (each a
 * JSON pointer and a message) or 415 `GW_REQUEST_NOT_JSON` for a body that is not JSON. It runs
 * after request buffering, which keeps such a route's whole body in memory (its body limit is
 * `request.maxBytes`), so the bytes validated are the bytes forwarded.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Exchange, Layer } from '../pipeline/types.js';
import type { ErrorCode } from '../response/errors.js';
import { sendError } from '../response/send-error.js';
import type { BodyValidator, SchemaFailure } from './types.js';

/** `application/json`, or any `type/subtype+json`, with or without parameters. */
const JSON_TYPE = /^\s*[a-z0-9!#$&^_.+-]+\/(?:json|[a-z0-9!#$&^_.+-]*\+json)\s*(?:;|$)/i;

/** The layer that lets only a body matching `validator` through. */
export function requestSchemaLayer(validator: BodyValidator): Layer {
  return (next) => (ex) => {
    const body = ex.body;
    if (body === undefined) return refuse(ex, 'GW_REQUEST_INVALID', 'Request body is required: a JSON document');
    if (!isJsonBody(ex.req.headers)) return refuse(ex, 'GW_REQUEST_NOT_JSON');
    // Buffering keeps the whole body of a validated route in memory; a file means a larger one.
    if (!Buffer.isBuffer(body)) return refuse(ex, 'GW_BODY_TOO_LARGE');
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      return refuse(ex, 'GW_REQUEST_INVALID', 'Request body is not valid JSON');
    }
    const failures = validator.validate(value);
    if (failures === undefined) return next(ex);
    return refuse(ex, 'GW_REQUEST_INVALID', describe(failures), failures);
  };
}

/** JSON by its Content-Type, and not compressed (an encoded body cannot be checked). */
export function isJsonBody(headers: IncomingHttpHeaders): boolean {
  const type = headers['content-type'];
  const encoding = headers['content-encoding'];
  return (
    type !== undefined &&
    JSON_TYPE.test(type) &&
    (encoding === undefined || encoding.trim() === '' || encoding.trim() === 'identity')
  );
}

function describe(failures: readonly SchemaFailure[]): string {
  const first = failures[0];
  const where = first === undefined ? '' : `: ${first.pointer === '' ? 'the body' : first.pointer} ${first.message}`;
  return `Request body does not match the route's schema${where}`;
}

function refuse(ex: Exchange, code: ErrorCode, message?: string, failures?: readonly SchemaFailure[]): Promise<void> {
  ex.errorCode = code;
  sendError(ex.res, code, undefined, message, failures === undefined ? undefined : { errors: failures });
  return Promise.resolve();
}
