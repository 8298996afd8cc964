/**
 * Running a plugin's stage on one request, isolated (docs/plugins.md "Isolation"): a stage that
 * throws or rejects ends the request with a 500 GW_PLUGIN_FAILED, one that runs past its plugin's
 * `timeoutMs` with a 504 GW_PLUGIN_TIMEOUT, and either is logged with the plugin's name, the stage
 * and the request id. Nothing a plugin does can reject the pipeline's promise: a promise that
 * settles after its timeout is caught and logged, never left unhandled.
 *
 * A stage that returns synchronously costs no timer and no promise: only a returned promise is
 * raced against the plugin's time limit.
 */
import type { Exchange } from '../pipeline/types.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import { ERRORS, type ErrorCode } from '../response/errors.js';
import { sendError } from '../response/send-error.js';
import type { LoadedPlugin, PluginStage } from './types.js';
// A plugin's Response: the gateway sets its framing itself, from the body.
import { MESSAGE_FRAMING } from './header-checks.js';

/** What running plugins needs, made once per configuration. */
export interface PluginRunDeps {
  readonly logger: Logger;
  readonly events: EventBus;
}

/** A stage that ran past its time limit. */
export const TIMED_OUT: unique symbol = Symbol('plugin timed out');

/** A stage that threw or rejected. */
export class Failed {
  constructor(readonly err: unknown) {}
}

/** What a stage came to: its return value, `Failed`, or `TIMED_OUT`. */
export type Outcome = unknown;

/**
 * Runs `stage` of `lp` with `context`, bounded by the plugin's `timeoutMs`; never throws, and the
 * promise it may return never rejects.
 */
export function invoke(
  lp: LoadedPlugin,
  stage: PluginStage,
  context: unknown,
  ex: Exchange,
  deps: PluginRunDeps,
): Outcome | Promise<Outcome> {
  const fn = lp.plugin[stage] as (this: unknown, context: unknown) => unknown;
  const timed = deps.events.has('plugin:run');
  const started = timed ? performance.now() : 0;
  let result: unknown;
  try {
    result = fn.call(lp.plugin, context);
  } catch (err) {
    return new Failed(err);
  }
  if (!isThenable(result)) {
    if (timed) reportRun(deps, ex, lp, stage, started);
    return result;
  }
  return settleInTime(result, lp, stage, ex, deps, timed, started);
}

/**
 * A stage's promise raced against its plugin's time limit. Its own function, not a closure in
 * `invoke`: a closure there would make V8 allocate invoke's scope on every call, synchronous
 * stages included (measured: 70 bytes per stage and request).
 */
function settleInTime(
  result: PromiseLike<unknown>,
  lp: LoadedPlugin,
  stage: PluginStage,
  ex: Exchange,
  deps: PluginRunDeps,
  timed: boolean,
  started: number,
): Promise<Outcome> {
  return new Promise<Outcome>((resolve) => {
    let done = false;
    const timer = setTimeout(() => {
      done = true;
      resolve(TIMED_OUT);
    }, lp.timeoutMs);
    result.then(
      (value) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (timed) reportRun(deps, ex, lp, stage, started);
        resolve(value);
      },
      (err: unknown) => {
        if (done) {
          // Past its time limit the request has had its 504; the late rejection is only logged.
          deps.logger.warn(
            { reqId: ex.requestId, route: ex.route.id, plugin: lp.name, stage, err },
            'plugin rejected after its timeout',
          );
          return;
        }
        done = true;
        clearTimeout(timer);
        resolve(new Failed(err));
      },
    );
  });
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function reportRun(deps: PluginRunDeps, ex: Exchange, lp: LoadedPlugin, stage: PluginStage, started: number): void {
  deps.events.emit('plugin:run', {
    routeId: ex.route.id,
    plugin: lp.name,
    stage,
    durationMs: performance.now() - started,
  });
}

/** Whether an outcome is the failure of its stage (thrown, rejected, or timed out). */
export function isFailure(outcome: Outcome): boolean {
  return outcome === TIMED_OUT || outcome instanceof Failed;
}

/**
 * Answers the request with the gateway error of a failed stage, logged and reported. `err`
 * overrides the outcome's error (a stage that returned something that is no answer).
 */
export function failStage(
  ex: Exchange,
  lp: LoadedPlugin,
  stage: PluginStage,
  outcome: Outcome,
  deps: PluginRunDeps,
): void {
  const timedOut = outcome === TIMED_OUT;
  const code: ErrorCode = timedOut ? 'GW_PLUGIN_TIMEOUT' : 'GW_PLUGIN_FAILED';
  const err = outcome instanceof Failed ? outcome.err : undefined;
  deps.logger.error(
    {
      reqId: ex.requestId,
      route: ex.route.id,
      plugin: lp.name,
      stage,
      ...(timedOut ? { timeoutMs: lp.timeoutMs } : { err }),
    },
    timedOut ? 'plugin timed out' : 'plugin failed',
  );
  deps.events.emit('plugin:error', {
    requestId: ex.requestId,
    routeId: ex.route.id,
    plugin: lp.name,
    stage,
    kind: timedOut ? 'timeout' : 'failed',
  });
  ex.errorCode = code;
  sendError(ex.res, code);
}

/**
 * Applies what a request stage came to: undefined to go on (false), else the request is answered
 * here (true, or a promise once a `Response` is written).
 */
export function answerWith(
  ex: Exchange,
  lp: LoadedPlugin,
  stage: PluginStage,
  outcome: Outcome,
  deps: PluginRunDeps,
): boolean | Promise<void> {
  if (outcome === undefined) return false;
  if (isFailure(outcome)) {
    failStage(ex, lp, stage, outcome, deps);
    return true;
  }
  if (outcome instanceof Response) return writeResponse(ex, outcome, lp, stage, deps);
  if (isErrorAnswer(outcome)) {
    ex.errorCode = outcome.error;
    sendError(ex.res, outcome.error, undefined, outcome.message);
    return true;
  }
  failStage(ex, lp, stage, new Failed(new TypeError(`${stage} returned ${describe(outcome)}`)), deps);
  return true;
}

function isErrorAnswer(value: unknown): value is { error: ErrorCode; message?: string } {
  if (typeof value !== 'object' || value === null) return false;
  const { error, message } = value as { error?: unknown; message?: unknown };
  return (
    typeof error === 'string' && Object.hasOwn(ERRORS, error) && (message === undefined || typeof message === 'string')
  );
}

/** What an invalid return value was, for the log (never its content). */
function describe(value: unknown): string {
  if (typeof value === 'object' && value !== null && 'error' in value)
    return `{ error: ... } with a code that is not a gateway error code (docs/errors.md)`;
  return `a ${typeof value}: return nothing, a Response, or { error: code }`;
}

/** Writes a plugin's `Response` to the client (its body read whole first). */
export async function writeResponse(
  ex: Exchange,
  response: Response,
  lp: LoadedPlugin,
  stage: PluginStage,
  deps: PluginRunDeps,
): Promise<void> {
  let body: Buffer;
  try {
    body = Buffer.from(await response.arrayBuffer());
  } catch (err) {
    failStage(ex, lp, stage, new Failed(err), deps);
    return;
  }
  const res = ex.res;
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (!MESSAGE_FRAMING.has(name) && name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  const noBody = ex.req.method === 'HEAD' || response.status === 204 || response.status === 304;
  if (response.status !== 204) headers['content-length'] = String(body.length);
  try {
    res.writeHead(response.status, headers);
  } catch (err) {
    // A header Node refuses to send: the plugin's mistake, answered as its failure.
    failStage(ex, lp, stage, new Failed(err), deps);
    return;
  }
  res.end(noBody ? undefined : body);
}
