/**
 * What the guards compile for a route and the pipeline holds: the request body's validator
 * (layers/json-schema.ts). Types only, so any module can import it.
 */

export interface SchemaFailure {
  /** JSON pointer to the failing value (`/items/0/qty`; `` for the whole body). */
  readonly pointer: string;
  readonly message: string;
}

export interface BodyValidator {
  /** Undefined when `value` matches the schema, else its failures. */
  validate(value: unknown): readonly SchemaFailure[] | undefined;
}
