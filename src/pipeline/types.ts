/**
 * The pipeline's contract: what every step of a route receives (Exchange) and the shapes that
 * build a route's handler (Step, Layer). One exchange serves every kind of request: HTTP/1.1,
 * HTTP/2 and WebSocket upgrades go through the same layers. Types only, so any module can
 * import it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FileHandle } from 'node:fs/promises';
import type { CompiledRoute } from '../config/types.js';
import type { UpstreamFailureKind } from '../upstream/upstream-error.js';

/**
 * A request body read completely before the backend call (guards/request-buffer.ts): in memory,
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
}

/** One stage of a route's handler: it answers, or passes the exchange on. */
export type Step = (ex: Exchange) => Promise<void>;
/** Wraps a step: does its one thing, then calls `next`, or answers and stops the chain. */
export type Layer = (next: Step) => Step;
