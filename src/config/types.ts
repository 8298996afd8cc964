/**
 * The compiled configuration's contract: what the gateway serves once a file is validated and
 * compiled (config/compile.ts). Types only, so any module can import it. The settings types
 * (`GatewaySettings`, `RouteConfig`, ...) are the schema's output and live with it in schema.ts.
 */
import type { GatewaySettings, HttpMethod, RouteConfig } from './schema.js';
import type { Problem } from './problems.js';
import type { Template, UrlBuilder } from '../upstream/target-url.js';
import type { Origin } from '../upstream/origin.js';
import type { TracingSettings } from '../observability/otel-env.js';
import type { ClaimCheck } from '../auth/requirements.js';
import type { BodyValidator } from '../guards/json-schema.js';
import type { CompiledHeaderEdit } from '../upstream/header-edits.js';
import type { FieldFilter } from '../mapping/field-filter.js';

/** `mapping`: the JSON answer is buffered and transformed (mapping rules, field rules, or both). */
export type RouteKind = 'standard' | 'mapping' | 'aggregate' | 'sse' | 'websocket';

export interface CompiledMappingRule {
  readonly index: number;
  readonly tag: string;
  readonly removeKeyMapping: boolean;
  readonly service: string;
  readonly origin: Origin;
  readonly path: Template;
  readonly buildPath: UrlBuilder;
  /** The rule's `batch`, compiled; undefined: one call per distinct value. */
  readonly batch: CompiledBatch | undefined;
}

/** A mapping rule's `batch` (mapping/batch.ts). */
export interface CompiledBatch {
  /** The batch path before and after `{values}`. */
  readonly prefix: string;
  readonly suffix: string;
  readonly separator: string;
  readonly key: string;
  readonly max: number;
}

/** One backend of an aggregated route (`backends:`). */
export interface CompiledBackend {
  readonly index: number;
  readonly service: string;
  readonly origin: Origin;
  readonly path: Template;
  readonly buildPath: UrlBuilder;
  /** Key the answer is nested under; undefined: its fields are merged at the top level. */
  readonly group: string | undefined;
  /** The field taken from the answer, as dot-path names; undefined: the whole answer. */
  readonly target: readonly string[] | undefined;
  /** The backend's allow/deny/rename, compiled; undefined without any. */
  readonly filter: FieldFilter | undefined;
}

export interface CompiledRoute {
  /** `GET /users/{id}`: the label in logs and metrics (a template, never a raw path). */
  readonly id: string;
  readonly index: number;
  readonly method: HttpMethod;
  /** The route as written, without basePath. */
  readonly route: string;
  /** The path clients call: basePath + route. */
  readonly clientPath: string;
  /** `clientPath` in the router's syntax (config/router-path.ts). */
  readonly routerPath: string;
  /** The backend; an aggregated route's first backend (its own are in `backends`). */
  readonly service: string;
  readonly origin: Origin;
  readonly path: Template;
  readonly buildPath: UrlBuilder;
  readonly kind: RouteKind;
  /** An aggregated route's backends, in the order written; empty for every other kind. */
  readonly backends: readonly CompiledBackend[];
  readonly requiresAuth: boolean;
  /** The route's `require:` rules on a valid token's claims; undefined when it has none. */
  readonly checkClaims: ClaimCheck | undefined;
  readonly mapping: readonly CompiledMappingRule[];
  /** Largest request body: the route's maxBodyBytes, else config.limits.maxBodyBytes (at most request.maxBytes). */
  readonly maxBodyBytes: number;
  /** The route's `request.schema`, compiled; undefined without one. */
  readonly validateBody: BodyValidator | undefined;
  /** Read the whole request body before the backend call (guards/request-buffer.ts). */
  readonly buffersRequest: boolean;
  /** The route's `response` field rules (allow, deny, rename), compiled; undefined without any. */
  readonly filterResponse: FieldFilter | undefined;
  /** The route's header rules (`headers.request` / `headers.response`), compiled; undefined for a side without rules. */
  readonly editHeaders: {
    readonly request: CompiledHeaderEdit | undefined;
    readonly response: CompiledHeaderEdit | undefined;
  };
  /** The route's own rate-limit options as written (resolved by guards/rate-limit.ts). */
  readonly rateLimit: RouteConfig['rateLimit'];
  /**
   * Retries allowed per request on a named upstream: the route's `retries`, or 0 for a method that
   * is not idempotent (POST, PATCH) unless `retryNonIdempotent`.
   */
  readonly retries: number;
  /** `config.timeouts` with the route's own `timeouts` over it. */
  readonly timeouts: GatewaySettings['timeouts'];
}

/** `config.tls` with its files read (config/tls-files.ts). */
export interface CompiledTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly minVersion: 'TLSv1.2' | 'TLSv1.3';
  /** Certificates by server name: exact names, or `*.example.com`. */
  readonly sni: readonly { readonly name: string; readonly cert: Buffer; readonly key: Buffer }[];
  readonly ca: Buffer | undefined;
  readonly clientAuth: 'none' | 'optional' | 'required';
  readonly redirectPort: number | undefined;
  readonly hstsMaxAgeSec: number | undefined;
}

export interface CompiledConfig {
  readonly file: string;
  readonly settings: GatewaySettings;
  /** basePath normalised: '' when there is no prefix. */
  readonly prefix: string;
  readonly routes: readonly CompiledRoute[];
  /** TLS on the listener; undefined: plain HTTP. */
  readonly tls?: CompiledTls;
  /**
   * `telemetry` merged with the OTEL_* environment at load; absent when compiled without an
   * environment (then the gateway uses `settings.telemetry` alone).
   */
  readonly tracing?: TracingSettings;
}

/** `notices`: warnings and notes about a valid file, for `check` to print. */
export type LoadResult =
  { ok: true; config: CompiledConfig; notices: readonly Problem[] } | { ok: false; problems: readonly Problem[] };
