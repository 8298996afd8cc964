/**
 * A hook on the gateway errors of one response: a route whose plugins watch errors (`onError`,
 * src/layers/plugin.ts) registers one, and `sendError` hands it the error instead of writing it.
 * The gateway's own response classes (server/gateway-response.ts) carry it in a field that every
 * response has from its construction, so registering costs one store and routes without such
 * plugins pay one read on their error path only. Any other response (a test double) keeps it in
 * a WeakMap: correct, but a WeakMap entry per request is far too costly for the hot path (each
 * one is an ephemeron the garbage collector has to trace).
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

/**
 * Takes over the writing of an error: it must write an answer on the response, now or later. An
 * object with a method rather than a function, so that a route's per-request hooks are one object
 * (layers/plugin.ts) and not a closure each.
 */
export interface ErrorHook {
  onGatewayError(error: PendingError): void;
}

/** The field the gateway's response classes declare for the hook. */
export interface ErrorHookSlot {
  errorHook: ErrorHook | undefined;
}

const others = new WeakMap<ServerResponse, ErrorHook>();

function hasSlot(res: ServerResponse): res is ServerResponse & ErrorHookSlot {
  return 'errorHook' in res;
}

/** Registers `hook` for the next gateway error written on `res`. */
export function interceptErrors(res: ServerResponse, hook: ErrorHook): void {
  if (hasSlot(res)) res.errorHook = hook;
  else others.set(res, hook);
}

/** The hook registered on `res`, removed: it runs once, and what it writes is not intercepted again. */
export function takeErrorHook(res: ServerResponse): ErrorHook | undefined {
  if (hasSlot(res)) {
    const hook = res.errorHook;
    res.errorHook = undefined;
    return hook;
  }
  const hook = others.get(res);
  if (hook !== undefined) others.delete(res);
  return hook;
}
