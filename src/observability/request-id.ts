import { randomUuid } from './random-ids.js';

/** A client id is kept when it is short printable ASCII; anything else is replaced (log safety). */
const ACCEPTABLE = /^[\x21-\x7e]{1,128}$/;

/** docs/design-decisions.md: the client's X-Request-ID if it sent a usable one, else a new UUID. */
export function requestIdFor(clientValue: string | string[] | undefined): string {
  return typeof clientValue === 'string' && ACCEPTABLE.test(clientValue) ? clientValue : randomUuid();
}
