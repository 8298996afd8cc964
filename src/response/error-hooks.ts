/**
 * A hook on the gateway errors of one response: a route whose plugins watch errors (`onError`,
 * src/layers/plugin.ts) registers one, and `sendError` hands it the error instead of writing it.
 * Kept in a WeakMap beside the response, so routes without such plugins pay one lookup on their
 * error path only, and none on their answers.
 */
import type { ServerResponse } from 'node:http';
import type { ErrorCode } from './errors.js';

/** The arguments of `sendError` after the response. */
export interface PendingError {
  readonly code: ErrorCode;
  readonly extraHeaders: Record<string, string | number> | undefined;
  readonly message: string | undefined;
  readonly details: Readonly<Record<string, unknown>> | undefined;
}

/** Takes over the writing of an error: it must write an answer on the response, now or later. */
export type ErrorHook = (error: PendingError) => void;

const hooks = new WeakMap<ServerResponse, ErrorHook>();

/** Registers `hook` for the next gateway error written on `res`. */
export function interceptErrors(res: ServerResponse, hook: ErrorHook): void {
  hooks.set(res, hook);
}

/** The hook registered on `res`, removed: it runs once, and what it writes is not intercepted again. */
export function takeErrorHook(res: ServerResponse): ErrorHook | undefined {
  const hook = hooks.get(res);
  if (hook !== undefined) hooks.delete(res);
  return hook;
}
