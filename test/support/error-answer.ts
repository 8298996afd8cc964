/**
 * What every error the gateway writes carries, whoever asked and however (docs/errors.md): the
 * status, a JSON body, and the error code in X-Portico-Error.
 */
import assert from 'node:assert/strict';

/** An answer read by any of the test clients: undici, node:http or a raw socket. */
export interface AnswerHead {
  readonly status: number;
  readonly headers: Readonly<Record<string, unknown>>;
}

/**
 * Asserts that `res` is the gateway's error `code` with `status`, in JSON.
 * @example assertErrorHead(await conn.next(), 400, 'GW_BAD_REQUEST');
 */
export function assertErrorHead(res: AnswerHead, status: number, code: string): void {
  assert.equal(res.status, status, `status ${res.status}, error ${String(res.headers['x-portico-error'])}`);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.headers['x-portico-error'], code);
}
