/**
 * The pipeline's contract: the route a pipeline runs (CompiledRoute: config/'s RouteSpec plus
 * what each feature compiled from it), what every step of a route receives (Exchange) and the
 * shapes that build a route's handler (Step, Layer). One exchange serves every kind of request:
 * HTTP/1.1, HTTP/2 and WebSocket upgrades go through the same layers. Types only, so any module
 * can import it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FileHandle } from 'node:fs/promises';
import type { BackendSpec, CompiledConfig, MappingRuleSpec, RouteSpec } from '../config/types.js';
import type { CompiledHeaderEdit, Upstream, UpstreamFailureKind, UrlBuilder } from '../upstream/types.js';
import type { ClaimCheck } from '../auth/types.js';
import type { BodyValidator } from '../layers/types.js';
import type { PluginRequest } from '../plugins/types.js';

/** Filters a JSON text (mapping/field-filter.ts); undefined when the text is not an object or an array of objects. */
export type FieldFilter = (text: string) => string | undefined;

/** A mapping rule's `batch`, compiled (mapping/batch.ts). */
export interface CompiledBatch {
  /** The batch path before and after `{values}`. */
  readonly prefix: string;
  readonly suffix: string;
  readonly separator: string;
  readonly key: string;
  readonly max: number;
}

export interface CompiledMappingRule extends Omit<MappingRuleSpec, 'batch'> {
  readonly buildPath: UrlBuilder;
  /** The rule's `batch`, compiled; undefined: one call per distinct value. */
  readonly batch: CompiledBatch | undefined;
}

/** One backend of an aggregated route, compiled. */
export interface CompiledBackend extends BackendSpec {
  readonly buildPath: UrlBuilder;
  /** The backend's allow/deny/rename, compiled; undefined without any. */
  readonly filter: FieldFilter | undefined;
}

/**
 * A route as its pipeline runs it: the configuration's data (RouteSpec) and what each feature
 * compiled from it once, when the pipeline was built (pipeline/compile-route.ts).
 */
export interface CompiledRoute extends Omit<RouteSpec, 'backends' | 'mapping'> {
  readonly buildPath: UrlBuilder;
  /** The route's `ipRules` (its own, else `config.ipRules`) on a request's client; undefined: it refuses nobody. */
  readonly refusesClient: ((req: IncomingMessage) => boolean) | undefined;
  /** An aggregated route's backends, in the order written; empty for every other kind. */
  readonly backends: readonly CompiledBackend[];
  /** The route's `require:` rules, compiled; undefined when it has none. */
  readonly checkClaims: ClaimCheck | undefined;
  readonly mapping: readonly CompiledMappingRule[];
  /** The route's `request.schema`, compiled; undefined without one. */
  readonly validateBody: BodyValidator | undefined;
  /** The route's `response` field rules (allow, deny, rename), compiled; undefined without any. */
  readonly filterResponse: FieldFilter | undefined;
  /** The route's header rules (`headers.request` / `headers.response`), compiled; undefined for a side without rules. */
  readonly editHeaders: {
    readonly request: CompiledHeaderEdit | undefined;
    readonly response: CompiledHeaderEdit | undefined;
  };
}

/** A configuration as its pipelines use it: every route compiled. */
export interface PipelineConfig extends Omit<CompiledConfig, 'routes'> {
  readonly routes: readonly CompiledRoute[];
}

/**
 * A request body read completely before the backend call (layers/request-buffer.ts): in memory,
 * or in an unlinked temporary file once it outgrew the memory buffer.
 */
export type RequestBody = Buffer | { readonly handle: FileHandle; readonly size: number };

/**
 * The raw connection of a WebSocket handshake on a WebSocket route. Node hands an upgrade over
 * with the bare socket; the exchange's `res` writes onto that socket (server/socket-response.ts),
 * so every layer answers an upgrade as it answers a plain request, and only the endpoint that
 * switches protocols touches the socket itself.
 */
export interface UpgradeRequest {
  readonly socket: Duplex;
  /** Bytes the client sent after its handshake (usually empty). */
  readonly head: Buffer;
  /** True once the endpoint answered 101 and took the socket over for the tunnel. */
  switched: boolean;
  /**
   * The socket's error listener until a tunnel listens for its errors (server/upgrade.ts), one
   * function shared by every upgrade: the tunnel removes it, so that an open tunnel's socket
   * carries one listener fewer (docs/performance.md "Scale in connections").
   */
  readonly errorListener?: (err: Error) => void;
}

/** The authenticated caller, for limits and quotas by consumer (layers/rate-limit.ts). */
export interface Consumer {
  readonly id: string;
  /** The consumer's `plan`, for quotas by plan; undefined without one. */
  readonly plan: string | undefined;
}

/**
 * What a route's plugins changed of the backend call (`beforeUpstream`, src/plugins/): applied
 * after the route's own header rules (upstream/call/route-call.ts).
 */
export interface UpstreamEdits {
  /** The backend path and query instead of the route's; undefined: the route's. */
  path: string | undefined;
  /** Header names (lower case) set to a value, or removed (undefined), in order. */
  readonly headers: [name: string, value: string | undefined][];
  /** The named upstream a plugin chose (`upstream.setTarget`); undefined: the route's backend. */
  target: Upstream | undefined;
}

/**
 * The response head as the backend sent it, before it goes out: a route's `onResponse` plugins.
 * `onResponseHead` returns true to write the head (edited in place), false when the plugins
 * answered instead (the backend's answer is dropped), or a promise of either. An object with a
 * method, not a function: the route's hooks of one request are one object (layers/plugin.ts).
 */
export interface ResponseHeadHook {
  onResponseHead(status: number, headers: Record<string, string | string[]>): boolean | Promise<boolean>;
}

/** One client request on its way through a route's pipeline. */
export interface Exchange {
  readonly route: CompiledRoute;
  readonly req: IncomingMessage;
  /** The answer: a ServerResponse, written onto the raw socket for an upgrade. */
  readonly res: ServerResponse;
  /** Set for a WebSocket handshake on a WebSocket route; undefined for every other request. */
  readonly upgrade: UpgradeRequest | undefined;
  readonly requestId: string;
  /** Path parameters, already percent-decoded by the router. */
  readonly params: Readonly<Record<string, string>>;
  /**
   * The client's query string without `?`, as sent ('' when none); the auth layer removes a token
   * parameter (`auth.tokenFrom`) before the backend call.
   */
  rawQuery: string;
  /** `X-<claim>` headers set by the auth layer; they replace client headers of the same name. */
  claimHeaders: [name: string, value: string][] | undefined;
  /** The valid token's claims, set by the auth layer (header rules fill `{claims.NAME}` from them). */
  claims: Readonly<Record<string, unknown>> | undefined;
  /** Who is calling, once authenticated: an API key's consumer, or the `sub` of a token (layers/auth.ts). */
  consumer: Consumer | undefined;
  /** Status the backend answered with, when it answered. */
  upstreamStatus: number | undefined;
  /** Why the backend gave no answer, when it did not (the circuit counts it, unless 'aborted'). */
  upstreamFailure: UpstreamFailureKind | undefined;
  /** The client's body once buffered; undefined while it is unread or streamed as it comes. */
  body?: RequestBody | undefined;
  /** Code of the gateway error answered, if any (for logs and metrics). */
  errorCode: string | undefined;
  /**
   * Called when the client response closes, finished or not, before the request is reported:
   * the endpoint's hook to release its backend call when the client leaves. One listener on the
   * response (server/http-server.ts) calls it, rather than a second `once('close')` per request.
   */
  onClose?: (() => void) | undefined;
  /**
   * Called by a streaming endpoint when it starts the response, once the backend's outcome is on
   * the exchange: the circuit layer's hook to settle the permit of a stream that stays open.
   */
  onResponseStart?: (() => void) | undefined;
  /** The request as plugins see it, made by the first plugin stage; undefined on a route without plugins. */
  pluginView: PluginRequest | undefined;
  /** What plugins changed of the backend call; undefined when none did. */
  upstreamEdits: UpstreamEdits | undefined;
  /** Set on a route with `onResponse` plugins: the backend call runs it on the answer's head. */
  onResponseHead: ResponseHeadHook | undefined;
}

/** One stage of a route's handler: it answers, or passes the exchange on. */
export type Step = (ex: Exchange) => Promise<void>;
/** Wraps a step: does its one thing, then calls `next`, or answers and stops the chain. */
export type Layer = (next: Step) => Step;
