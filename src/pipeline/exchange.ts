/**
 * A new exchange, made by the request handler once a route matched: every field present from the
 * start (the layers and endpoints fill them in), so every exchange has one shape.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CompiledRoute, Exchange, UpgradeRequest } from './types.js';

/** The exchange of one request for `route`; `upgrade` for a WebSocket handshake. */
export function createExchange(
  route: CompiledRoute,
  req: IncomingMessage,
  res: ServerResponse,
  upgrade: UpgradeRequest | undefined,
  requestId: string,
  params: Readonly<Record<string, string>>,
  rawQuery: string,
): Exchange {
  return {
    route,
    req,
    res,
    upgrade,
    requestId,
    params,
    rawQuery,
    claimHeaders: undefined,
    claims: undefined,
    consumer: undefined,
    upstreamStatus: undefined,
    upstreamFailure: undefined,
    body: undefined,
    errorCode: undefined,
    onClose: undefined,
    onResponseStart: undefined,
    pluginView: undefined,
    upstreamEdits: undefined,
    onResponseHead: undefined,
  };
}
