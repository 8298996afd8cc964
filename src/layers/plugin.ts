/**
 * The stages of a route's plugins (docs/plugins.md), as layers of its pipeline. A route without
 * plugins has none of them; a route gets only the layers of the stages its plugins implement:
 *
 *   pluginHooksLayer     outermost: the `onResponse` hook on the backend call's head, the
 *                        `onError` hook on the route's gateway errors (response/error-hooks.ts)
 *   onRequest            after the cheap refusals (rate limit, body limits), before auth
 *   onAuthenticated      after auth (and the request body, for a plugin that reads it)
 *   beforeUpstream       last before the circuit and the endpoint: the backend call's headers, path
 *
 * Plugins run in the route's order (`config.plugins`, then the route's own); the first that
 * answers ends the request. Failures and timeouts are src/plugins/run.ts's.
 */
import type { Exchange, Layer, ResponseHeadHook } from '../pipeline/types.js';
import { ERRORS } from '../response/errors.js';
import type { ErrorHook, PendingError } from '../response/error-hooks.js';
import { interceptErrors } from '../response/error-hooks.js';
import { sendError } from '../response/send-error.js';
import {
  Context,
  ErrorContext,
  RequestView,
  ResponseBodyContext,
  ResponseContext,
  UpstreamContext,
  type TargetChoice,
} from '../plugins/context.js';
import type { RunBodyPlugins } from '../endpoints/json-transform.js';
import {
  answerWith,
  Failed,
  failStage,
  invoke,
  isFailure,
  writeResponse,
  type Outcome,
  type PluginRunDeps,
} from '../plugins/run.js';
import type { LoadedPlugin, PluginStage } from '../plugins/types.js';

/** What a route's plugin layers need, made once per route. */
export interface PluginLayerDeps extends PluginRunDeps {
  /** The client's address, with `trustProxy` applied. */
  readonly clientIp: (ex: Exchange) => string;
  /** The route's drop set (upstream/trust-boundary.ts): names no plugin may set on the backend call. */
  readonly dropHeaders: ReadonlySet<string>;
  /** The backends `upstream.setTarget` may choose on this route. */
  readonly targets: TargetChoice;
}

function viewOf(ex: Exchange, deps: PluginLayerDeps): RequestView {
  return (ex.pluginView ??= new RequestView(ex, deps.clientIp)) as RequestView;
}

function isPromise(value: unknown): value is Promise<unknown> {
  return value instanceof Promise;
}

/** The promise of a stage that answered without waiting: one for every request. */
const ANSWERED: Promise<void> = Promise.resolve();

/**
 * One request stage (`onRequest`, `onAuthenticated`, `beforeUpstream`) of the route's plugins
 * that implement it. Written without `async`: while every plugin returns synchronously the layer
 * costs its calls and hands `next`'s own promise on, with no promise or microtask of its own; the
 * first plugin that returns a promise moves the rest of the stage to `finishStage`.
 */
export function pluginStageLayer(
  stage: 'onRequest' | 'onAuthenticated' | 'beforeUpstream',
  plugins: readonly LoadedPlugin[],
  deps: PluginLayerDeps,
): Layer {
  const contextOf =
    stage === 'beforeUpstream'
      ? (view: RequestView, lp: LoadedPlugin, ex: Exchange) =>
          new UpstreamContext(view, lp, deps.logger, ex, deps.dropHeaders, deps.targets)
      : (view: RequestView, lp: LoadedPlugin) => new Context(view, lp, deps.logger);
  return (next) => {
    const runFrom = (ex: Exchange, from: number): Promise<void> => {
      const view = viewOf(ex, deps);
      for (let i = from; i < plugins.length; i++) {
        const lp = plugins[i]!;
        const outcome = invoke(lp, stage, contextOf(view, lp, ex), ex, deps);
        if (outcome === undefined) continue;
        if (isPromise(outcome)) return finishStage(ex, lp, i, outcome);
        const answered = answerWith(ex, lp, stage, outcome, deps);
        if (answered === false) continue;
        return answered === true ? ANSWERED : answered;
      }
      return next(ex);
    };
    /** The stage after a plugin's promise: its outcome applied, then the plugins after it. */
    const finishStage = async (ex: Exchange, lp: LoadedPlugin, i: number, pending: Promise<Outcome>) => {
      const outcome = await pending;
      if (outcome !== undefined) {
        const answered = answerWith(ex, lp, stage, outcome, deps);
        if (answered === true) return;
        if (answered !== false) return answered;
      }
      return runFrom(ex, i + 1);
    };
    return (ex) => runFrom(ex, 0);
  };
}

/**
 * Installs the route's `onResponse` and `onError` hooks on each exchange: one object per request
 * that is both hooks, where two closures (and the scope they share) cost three.
 */
export function pluginHooksLayer(
  onResponse: readonly LoadedPlugin[],
  onError: readonly LoadedPlugin[],
  deps: PluginLayerDeps,
): Layer {
  const route: RouteHooks = { onResponse, onError, deps };
  const watchesHead = onResponse.length > 0;
  const watchesErrors = onError.length > 0;
  return (next) => (ex) => {
    const hooks = new RequestHooks(ex, route);
    if (watchesHead) ex.onResponseHead = hooks;
    if (watchesErrors) interceptErrors(ex.res, hooks);
    return next(ex);
  };
}

/** What a route's hooks are, made once per route. */
interface RouteHooks {
  readonly onResponse: readonly LoadedPlugin[];
  readonly onError: readonly LoadedPlugin[];
  readonly deps: PluginLayerDeps;
}

/** The route's hooks on one request: the backend call and `sendError` call them. */
class RequestHooks implements ResponseHeadHook, ErrorHook {
  readonly #ex: Exchange;
  readonly #route: RouteHooks;

  constructor(ex: Exchange, route: RouteHooks) {
    this.#ex = ex;
    this.#route = route;
  }
  onResponseHead(status: number, headers: Record<string, string | string[]>): boolean | Promise<boolean> {
    return runHead(this.#ex, this.#route.onResponse, status, headers, this.#route.deps);
  }
  onGatewayError(error: PendingError): void {
    void runErrors(this.#ex, this.#route.onError, error, this.#route.deps);
  }
}

/** The `onResponse` plugins on the head: true to write it, false when a failure answered instead. */
function runHead(
  ex: Exchange,
  plugins: readonly LoadedPlugin[],
  status: number,
  headers: Record<string, string | string[]>,
  deps: PluginLayerDeps,
  from = 0,
): boolean | Promise<boolean> {
  const view = viewOf(ex, deps);
  for (let i = from; i < plugins.length; i++) {
    const lp = plugins[i]!;
    const outcome = invoke(lp, 'onResponse', new ResponseContext(view, lp, deps.logger, status, headers), ex, deps);
    if (isPromise(outcome)) return finishHead(ex, plugins, status, headers, deps, i, outcome);
    if (!headDone(ex, lp, outcome, deps)) return false;
  }
  return true;
}

/**
 * The head after a plugin's promise: its outcome, then the plugins after it. Its own function:
 * a closure in `runHead` would make V8 allocate runHead's scope on every head, synchronous or not.
 */
async function finishHead(
  ex: Exchange,
  plugins: readonly LoadedPlugin[],
  status: number,
  headers: Record<string, string | string[]>,
  deps: PluginLayerDeps,
  i: number,
  pending: Promise<Outcome>,
): Promise<boolean> {
  return headDone(ex, plugins[i]!, await pending, deps) && runHead(ex, plugins, status, headers, deps, i + 1);
}

/**
 * False when the stage failed (its error is answered). onResponse edits the head and returns
 * nothing: a value returned is a mistake (an answer cannot replace a head already under way).
 */
function headDone(ex: Exchange, lp: LoadedPlugin, outcome: Outcome, deps: PluginLayerDeps): boolean {
  if (outcome === undefined) return true;
  const failure = isFailure(outcome)
    ? outcome
    : new Failed(new TypeError('onResponse returned a value: it edits the head through response and returns nothing'));
  failStage(ex, lp, 'onResponse', failure, deps);
  return false;
}

/**
 * The `onError` plugins on a gateway error about to be written: each may answer with a Response
 * of its own; otherwise the error goes out as it was. A failing `onError` answers its own error,
 * which no plugin sees again (the hook runs once per response).
 */
async function runErrors(
  ex: Exchange,
  plugins: readonly LoadedPlugin[],
  error: PendingError,
  deps: PluginLayerDeps,
): Promise<void> {
  const view = viewOf(ex, deps);
  const info = {
    code: error.code,
    status: ERRORS[error.code].status,
    message: error.message ?? ERRORS[error.code].message,
  };
  const stage: PluginStage = 'onError';
  for (const lp of plugins) {
    let outcome = invoke(lp, stage, new ErrorContext(view, lp, deps.logger, info), ex, deps);
    if (isPromise(outcome)) outcome = await outcome;
    if (outcome === undefined) continue;
    if (outcome instanceof Response) return writeResponse(ex, outcome, lp, stage, deps);
    if (!isFailure(outcome)) {
      const answered = answerWith(ex, lp, stage, outcome, deps);
      if (answered !== true && answered !== false) await answered;
      return;
    }
    failStage(ex, lp, stage, outcome, deps);
    return;
  }
  sendError(ex.res, error.code, error.extraHeaders, error.message, error.details);
}

/**
 * The `onResponseBody` plugins of a route (endpoints/json-transform.ts): each gets the JSON the
 * one before it returned; the new body, undefined when none returned anything (the backend's bytes
 * go out), or 'answered' when one failed and its error went out instead.
 */
export function responseBodyRunner(plugins: readonly LoadedPlugin[], deps: PluginLayerDeps): RunBodyPlugins {
  const stage: PluginStage = 'onResponseBody';
  return async (ex, status, headers, parsed) => {
    const view = viewOf(ex, deps);
    let json = parsed;
    let changed = false;
    for (const lp of plugins) {
      let outcome = invoke(lp, stage, new ResponseBodyContext(view, lp, deps.logger, status, headers, json), ex, deps);
      if (isPromise(outcome)) outcome = await outcome;
      if (isFailure(outcome)) {
        failStage(ex, lp, stage, outcome, deps);
        return 'answered';
      }
      if (outcome !== undefined) [json, changed] = [outcome, true];
    }
    if (!changed) return undefined;
    let text: string | undefined;
    try {
      text = JSON.stringify(json) as string | undefined;
    } catch (err) {
      failStage(ex, plugins.at(-1)!, stage, new Failed(err), deps);
      return 'answered';
    }
    if (text !== undefined) return Buffer.from(text, 'utf8');
    failStage(ex, plugins.at(-1)!, stage, new Failed(new TypeError('onResponseBody returned no JSON value')), deps);
    return 'answered';
  };
}
