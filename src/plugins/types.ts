/**
 * The plugin API (docs/plugins.md): what a plugin module declares (`definePlugin`) and the narrow,
 * typed view of one request each stage receives. A stage sees the request's route, parameters,
 * claims, id, headers and client address, and a logger bound to the request: never the socket,
 * the raw request or response objects, or another request. Types only, so any module can import
 * it.
 */
import type { z } from 'zod';
import type { ErrorCode } from '../response/errors.js';

/** The stages a plugin may run, in the order a request meets them. */
export type PluginStage =
  'onRequest' | 'onAuthenticated' | 'beforeUpstream' | 'onResponse' | 'onResponseBody' | 'onError';

/** A logger bound to one request and plugin: every line carries the request id, route and plugin name. */
export interface PluginLogger {
  debug(message: string, fields?: Readonly<Record<string, unknown>>): void;
  info(message: string, fields?: Readonly<Record<string, unknown>>): void;
  warn(message: string, fields?: Readonly<Record<string, unknown>>): void;
  error(message: string, fields?: Readonly<Record<string, unknown>>): void;
}

/** The request as a plugin sees it: read-only. */
export interface PluginRequest {
  /** The route's id: `METHOD /route` as written in the configuration. */
  readonly routeId: string;
  readonly method: string;
  /** The path the client asked for, without the query. */
  readonly path: string;
  /** The client's query string without `?` ('' when none). */
  readonly query: string;
  /** Path parameters, percent-decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** The request id (`X-Request-Id`), the one the access log and the backend see. */
  readonly requestId: string;
  /** The client's address, with `config.trustProxy` applied. */
  readonly clientAddress: string;
  /** A request header (case-insensitive name); several fields of one name are joined with `, `. */
  header(name: string): string | undefined;
  /** The verified token's claims: set from `onAuthenticated` on a route that requires a token; undefined otherwise. */
  readonly claims: Readonly<Record<string, unknown>> | undefined;
  /**
   * The request body, read whole: only for a plugin that declares `capabilities.requestBody`
   * (the route then buffers its bodies, within its body limits); rejects otherwise.
   */
  body(): Promise<Buffer>;
}

/** What every stage receives. */
export interface StageContext<Options> {
  readonly request: PluginRequest;
  /** The plugin's options from the configuration, checked against its schema and defaulted. */
  readonly options: Options;
  readonly log: PluginLogger;
}

/**
 * What a plugin may change of the backend call (`beforeUpstream`). Names are checked against the
 * trust boundary: a header the gateway sets itself or strips from clients (hop-by-hop, framing,
 * `Host`, `X-Forwarded-*`, `X-Request-Id`, trace context, `auth.stripHeaders`...) cannot be set
 * or removed by a plugin either; trying throws, and the request gets a 500 GW_PLUGIN_FAILED.
 */
export interface UpstreamRequest {
  /** Sets a request header for the backend, replacing any of that name. */
  setHeader(name: string, value: string): void;
  /** Removes a request header before the backend call. */
  removeHeader(name: string): void;
  /**
   * The backend path and query the call goes to (the route's `path` with its parameters and the
   * client's query); set it to send the call elsewhere on the same backend. Must start with `/`.
   */
  path: string;
  /**
   * Sends the call to another backend of the configuration: a named upstream (`upstreams:`) by
   * its name, never an arbitrary URL. The path and headers stay the call's. An unknown name
   * throws (the request gets a 500 GW_PLUGIN_FAILED), and so does a route whose kind makes no
   * such call (WebSocket, gRPC, aggregate).
   */
  setTarget(name: string): void;
}

/** The response head (`onResponse`): the backend's status and headers, before they go out. */
export interface ResponseHead {
  readonly status: number;
  header(name: string): string | undefined;
  /** Sets a response header, replacing any of that name; framing headers cannot be set. */
  setHeader(name: string, value: string): void;
  removeHeader(name: string): void;
}

/** The gateway error being answered (`onError`). */
export interface GatewayErrorInfo {
  /** The stable code, e.g. `GW_UPSTREAM_TIMEOUT`. */
  readonly code: string;
  readonly status: number;
  readonly message: string;
}

export interface UpstreamContext<Options> extends StageContext<Options> {
  readonly upstream: UpstreamRequest;
}

export interface ResponseContext<Options> extends StageContext<Options> {
  readonly response: ResponseHead;
}

/**
 * What `onResponseBody` receives: the backend's answer head (editable like `onResponse`'s) and
 * its body parsed as JSON, for a plugin with `capabilities.jsonResponse`.
 */
export interface ResponseBodyContext<Options> extends StageContext<Options> {
  readonly response: ResponseHead;
  /** The body as parsed (or as the plugin before this one returned it). */
  readonly json: unknown;
}

export interface ErrorContext<Options> extends StageContext<Options> {
  readonly error: GatewayErrorInfo;
}

/** The gateway's own JSON error, with one of its codes (docs/errors.md) and, if given, another message. */
export interface GatewayErrorAnswer {
  readonly error: ErrorCode;
  readonly message?: string;
}

/**
 * What a request stage returns: nothing to go on, or an answer that ends the request here: a
 * web-standard `Response`, or a gateway error.
 */
export type StageResult = void | undefined | Response | GatewayErrorAnswer;

type MaybePromise<T> = T | Promise<T>;

/** The stages a plugin implements; each may be async. */
export interface PluginStages<Options> {
  /** After routing, before authentication (your own API-key check, an allow-list). */
  onRequest?(context: StageContext<Options>): MaybePromise<StageResult>;
  /** After authentication (`request.claims` is set on a route that requires a token): authorization. */
  onAuthenticated?(context: StageContext<Options>): MaybePromise<StageResult>;
  /** Just before the backend call: rewrite its headers or path. */
  beforeUpstream?(context: UpstreamContext<Options>): MaybePromise<StageResult>;
  /** The backend's response head, before it goes to the client: edit its headers. */
  onResponse?(context: ResponseContext<Options>): MaybePromise<void>;
  /**
   * The backend's 2xx JSON answer, parsed (`capabilities.jsonResponse` required): return the new
   * JSON to send instead (it may be `json` itself, changed), or undefined to send it unchanged.
   */
  onResponseBody?(context: ResponseBodyContext<Options>): MaybePromise<unknown>;
  /** A gateway error on this route: observe it, or answer with a `Response` of your own instead. */
  onError?(context: ErrorContext<Options>): MaybePromise<void | undefined | Response>;
}

/** What a plugin may ask for beyond the head of the request. */
export interface PluginCapabilities {
  /** `request.body()`: the route buffers the request body (within its limits) before the plugin runs. */
  readonly requestBody?: boolean;
  /**
   * `onResponseBody`: the route buffers the backend's 2xx JSON answers (decoded, parsed) up to
   * `maxBytes` (default: `limits.maxMappingBodyBytes`), instead of streaming them.
   */
  readonly jsonResponse?: boolean | { readonly maxBytes?: number };
}

/** What `definePlugin` takes. */
export interface PluginDefinition<Schema extends z.ZodType | undefined> extends PluginStages<OptionsOf<Schema>> {
  /** A name for logs and `portico routes`; the configuration's `name` is the one routes use. */
  readonly name?: string;
  /** The schema of the plugin's options (zod); without one, the plugin takes no options. */
  readonly options?: Schema;
  readonly capabilities?: PluginCapabilities;
}

/** The options a plugin receives: its schema's output, or undefined without a schema. */
export type OptionsOf<Schema> = Schema extends z.ZodType ? z.output<Schema> : undefined;

/** A plugin, as `definePlugin` returns it and a module exports it by default. */
export type Plugin<Schema extends z.ZodType | undefined = z.ZodType | undefined> = PluginDefinition<Schema> & {
  /**
   * Marks what `definePlugin` made: a plain key rather than a class, so a plugin built against
   * another copy of the package (a plugin package with its own dependency) is recognised too.
   */
  readonly '~portico': 'plugin';
};

/** A plugin of the configuration, imported and with its options checked (src/plugins/load.ts). */
export interface LoadedPlugin {
  /** The configuration's name. */
  readonly name: string;
  readonly plugin: Plugin;
  /** Its options, parsed by its schema (defaults applied). */
  readonly options: unknown;
  readonly timeoutMs: number;
  /** The module's resolved location (a file path). */
  readonly from: string;
}

/** The configuration's plugins by name. */
export type LoadedPlugins = ReadonlyMap<string, LoadedPlugin>;
