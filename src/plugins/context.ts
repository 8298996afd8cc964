/**
 * What a plugin's stage receives: a read-only view of its own request, the plugin's options, a
 * logger bound to the request, and for some stages what it may change (the backend call's
 * headers and path, the response head). The exchange is held in `#private` fields, so no plugin
 * can reach the raw request, the response, the socket, or another request through them.
 */
import type { Exchange, UpstreamEdits } from '../pipeline/types.js';
import type { Logger } from '../observability/logger.js';
import type { Upstream } from '../upstream/types.js';
import { backendPath } from '../upstream/call/route-call.js';
import { checkedName, checkedValue } from './header-checks.js';
import type {
  GatewayErrorInfo,
  PluginLogger,
  PluginRequest,
  ResponseHead,
  StageContext,
  UpstreamRequest,
} from './types.js';
import type { LoadedPlugin } from './types.js';

/** The request as plugins see it: one per exchange, shared by its plugins. */
export class RequestView implements PluginRequest {
  readonly #ex: Exchange;
  readonly #clientIp: (ex: Exchange) => string;
  #clientAddress: string | undefined;

  constructor(ex: Exchange, clientIp: (ex: Exchange) => string) {
    this.#ex = ex;
    this.#clientIp = clientIp;
  }

  get routeId(): string {
    return this.#ex.route.id;
  }
  get method(): string {
    return this.#ex.req.method ?? 'GET';
  }
  get path(): string {
    const url = this.#ex.req.url ?? '/';
    const q = url.indexOf('?');
    return q < 0 ? url : url.slice(0, q);
  }
  get query(): string {
    return this.#ex.rawQuery;
  }
  get params(): Readonly<Record<string, string>> {
    return this.#ex.params;
  }
  get requestId(): string {
    return this.#ex.requestId;
  }
  get clientAddress(): string {
    return (this.#clientAddress ??= this.#clientIp(this.#ex));
  }
  get claims(): Readonly<Record<string, unknown>> | undefined {
    return this.#ex.claims;
  }
  header(name: string): string | undefined {
    const value = this.#ex.req.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  }
  /** Rejects unless the route buffers bodies for a plugin that asked (see the stage contexts). */
  async body(): Promise<Buffer> {
    const body = this.#ex.body;
    if (body === undefined)
      throw new Error(
        'request.body() needs capabilities: { requestBody: true }, and is read from onAuthenticated on (docs/plugins.md)',
      );
    if (Buffer.isBuffer(body)) return body;
    const whole = Buffer.alloc(body.size);
    await body.handle.read(whole, 0, body.size, 0);
    return whole;
  }
}

/** A plugin's log lines carry the request id, the route and the plugin's name. */
class PluginLog implements PluginLogger {
  readonly #logger: Logger;
  readonly #fields: Readonly<Record<string, unknown>>;

  constructor(logger: Logger, fields: Readonly<Record<string, unknown>>) {
    this.#logger = logger;
    this.#fields = fields;
  }
  debug(message: string, fields?: Readonly<Record<string, unknown>>): void {
    this.#logger.debug({ ...fields, ...this.#fields }, message);
  }
  info(message: string, fields?: Readonly<Record<string, unknown>>): void {
    this.#logger.info({ ...fields, ...this.#fields }, message);
  }
  warn(message: string, fields?: Readonly<Record<string, unknown>>): void {
    this.#logger.warn({ ...fields, ...this.#fields }, message);
  }
  error(message: string, fields?: Readonly<Record<string, unknown>>): void {
    this.#logger.error({ ...fields, ...this.#fields }, message);
  }
}

/** What every stage receives; the logger is made when first used. */
export class Context implements StageContext<unknown> {
  readonly request: RequestView;
  readonly options: unknown;
  readonly #lp: LoadedPlugin;
  readonly #logger: Logger;
  #log: PluginLog | undefined;

  constructor(request: RequestView, lp: LoadedPlugin, logger: Logger) {
    this.request = request;
    this.options = lp.options;
    this.#lp = lp;
    this.#logger = logger;
  }
  get log(): PluginLogger {
    return (this.#log ??= new PluginLog(this.#logger, {
      reqId: this.request.requestId,
      route: this.request.routeId,
      plugin: this.#lp.name,
    }));
  }
}

/**
 * What `upstream.setTarget` may choose on a route: the configuration's named upstreams, or none
 * where the route's kind makes no call a target could change (docs/plugins.md#choosing-the-backend).
 */
export interface TargetChoice {
  readonly targets: ReadonlyMap<string, Upstream>;
  /** Why this route's kind cannot change its backend; undefined: it can. */
  readonly refusal: string | undefined;
}

/** The backend call as `beforeUpstream` may change it. */
class UpstreamEditor implements UpstreamRequest {
  readonly #ex: Exchange;
  readonly #drop: ReadonlySet<string>;
  readonly #choice: TargetChoice;

  constructor(ex: Exchange, drop: ReadonlySet<string>, choice: TargetChoice) {
    this.#ex = ex;
    this.#drop = drop;
    this.#choice = choice;
  }
  #edits(): UpstreamEdits {
    return (this.#ex.upstreamEdits ??= { path: undefined, headers: [], target: undefined });
  }
  setTarget(name: string): void {
    // Only a backend of the configuration: what reaches a backend is what the gateway configured.
    if (this.#choice.refusal !== undefined) throw new TypeError(this.#choice.refusal);
    const target = typeof name === 'string' ? this.#choice.targets.get(name) : undefined;
    if (target === undefined)
      throw new TypeError(
        `upstream.setTarget: "${String(name)}" is not a named upstream of the configuration (upstreams:)`,
      );
    this.#edits().target = target;
  }
  setHeader(name: string, value: string): void {
    const lower = checkedName(name, (n) => this.#drop.has(n), 'request');
    this.#edits().headers.push([lower, checkedValue(value)]);
  }
  removeHeader(name: string): void {
    this.#edits().headers.push([checkedName(name, (n) => this.#drop.has(n), 'request'), undefined]);
  }
  get path(): string {
    return backendPath(this.#ex.route, this.#ex);
  }
  set path(path: string) {
    // An origin-form target (RFC 9112 3.2.1): a path, never a scheme or authority of another host.
    if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//') || /[\0-\x20\x7f]/.test(path))
      throw new TypeError('upstream.path must start with a single "/" and hold no space or control character');
    this.#edits().path = path;
  }
}

/** Context of `beforeUpstream`; its editor is made when a plugin first reads `upstream`. */
export class UpstreamContext extends Context {
  readonly #ex: Exchange;
  readonly #drop: ReadonlySet<string>;
  readonly #choice: TargetChoice;
  #upstream: UpstreamEditor | undefined;

  constructor(
    request: RequestView,
    lp: LoadedPlugin,
    logger: Logger,
    ex: Exchange,
    drop: ReadonlySet<string>,
    choice: TargetChoice,
  ) {
    super(request, lp, logger);
    this.#ex = ex;
    this.#drop = drop;
    this.#choice = choice;
  }
  get upstream(): UpstreamRequest {
    return (this.#upstream ??= new UpstreamEditor(this.#ex, this.#drop, this.#choice));
  }
}

/** The response head as `onResponse` may edit it: the record the backend call writes. */
class ResponseHeadView implements ResponseHead {
  readonly status: number;
  readonly #headers: Record<string, string | string[]>;

  constructor(status: number, headers: Record<string, string | string[]>) {
    this.status = status;
    this.#headers = headers;
  }
  header(name: string): string | undefined {
    const value = this.#headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  }
  setHeader(name: string, value: string): void {
    this.#headers[checkedName(name, isGatewayResponseHeader, 'response')] = checkedValue(value);
  }
  removeHeader(name: string): void {
    delete this.#headers[checkedName(name, isGatewayResponseHeader, 'response')];
  }
}

/** The request id is the gateway's on every answer. */
function isGatewayResponseHeader(folded: string): boolean {
  return folded === 'x-request-id';
}

/** Context of `onResponse`; its view of the head is made when a plugin first reads `response`. */
export class ResponseContext extends Context {
  readonly #status: number;
  readonly #headers: Record<string, string | string[]>;
  #response: ResponseHeadView | undefined;

  constructor(
    request: RequestView,
    lp: LoadedPlugin,
    logger: Logger,
    status: number,
    headers: Record<string, string | string[]>,
  ) {
    super(request, lp, logger);
    this.#status = status;
    this.#headers = headers;
  }
  get response(): ResponseHead {
    return (this.#response ??= new ResponseHeadView(this.#status, this.#headers));
  }
}

/** Context of `onResponseBody`. */
export class ResponseBodyContext extends ResponseContext {
  readonly json: unknown;

  constructor(
    request: RequestView,
    lp: LoadedPlugin,
    logger: Logger,
    status: number,
    headers: Record<string, string | string[]>,
    json: unknown,
  ) {
    super(request, lp, logger, status, headers);
    this.json = json;
  }
}

/** Context of `onError`. */
export class ErrorContext extends Context {
  readonly error: GatewayErrorInfo;

  constructor(request: RequestView, lp: LoadedPlugin, logger: Logger, error: GatewayErrorInfo) {
    super(request, lp, logger);
    this.error = error;
  }
}
