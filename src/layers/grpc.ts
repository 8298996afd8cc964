/** The first layer of a gRPC route (`grpc: true`): HTTP/2 only, and errors as gRPC statuses. */
import type { Layer } from '../pipeline/types.js';
import { sendError } from '../response/send-error.js';
import { answerAsGrpc } from '../response/grpc-status.js';

/**
 * gRPC runs over HTTP/2 only (it needs streams in both directions at once and trailers): a
 * request over HTTP/1.1 is refused with a JSON 505 (its client does not speak gRPC, so a gRPC
 * status would mean nothing to it) and never reaches the backend. 505 rather than 426: an
 * HTTP/1.1 connection cannot be upgraded to HTTP/2 over TLS (RFC 9113 3.1), and the gateway
 * offers h2c by prior knowledge only (docs/routing.md, "gRPC"). Every later refusal of the
 * route (401, 429, 503...) is then answered as a gRPC status (response/grpc-status.ts).
 */
export function grpcLayer(): Layer {
  return (next) => (ex) => {
    if (ex.req.httpVersionMajor !== 2) {
      ex.errorCode = 'GW_GRPC_HTTP_VERSION';
      ex.req.resume();
      sendError(ex.res, 'GW_GRPC_HTTP_VERSION');
      return Promise.resolve();
    }
    answerAsGrpc(ex.res);
    return next(ex);
  };
}
