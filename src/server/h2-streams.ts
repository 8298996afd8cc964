/**
 * HTTP/2 requests through node:http2's core API: each new stream (its head in, `respond()` out)
 * becomes the gateway's own request and response objects (server/http2-request.ts,
 * server/h2-response.ts), handed to the same handler as an HTTP/1.1 request. node:http2's
 * compatibility layer is never set up: it would build a Readable and a Stream per stream and put
 * eleven listeners on it; the gateway's pair puts three (server/http2-request.ts, h2-response.ts).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { IncomingHttpHeaders, Http2SecureServer, Http2Server, ServerHttp2Stream } from 'node:http2';
import { isGrpcContentType } from '../response/grpc-status.js';
import { sendError } from '../response/send-error.js';
import { requestIdFor } from '../observability/request-id.js';
import type { GatewayH2Response } from './h2-response.js';
import { GatewayH2Request } from './http2-request.js';
import { ROUTE_METHODS } from './protocol-checks.js';

/**
 * Serves the HTTP/2 streams of `server` with `handler`, answering through `Response`. The
 * server's 'request' event is left to HTTP/1.1 (a secure server's `allowHTTP1`): node:http2
 * sets up its compatibility layer on the 'stream' event as soon as a 'request' listener is added,
 * so that one is taken off.
 */
export function serveStreams(
  server: Http2Server | Http2SecureServer,
  handler: RequestListener,
  Response: typeof GatewayH2Response,
): void {
  server.removeAllListeners('stream');
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, _flags: number, raw: string[]) => {
    const req = new GatewayH2Request(stream, headers, raw) as unknown as IncomingMessage;
    const res = new Response(stream, isGrpcContentType(headers['content-type'])) as unknown as ServerResponse;
    const method = headers[':method'];
    // The gateway is no forward proxy (server/protocol-checks.ts says the same on HTTP/1.1).
    if (method === 'CONNECT') {
      (res as unknown as GatewayH2Response).requestId = requestIdFor(headers['x-request-id']);
      return sendError(res, 'GW_METHOD_UNSUPPORTED', { allow: ROUTE_METHODS });
    }
    const expect = headers.expect;
    if (expect !== undefined) {
      // RFC 9110 10.1.1: the only expectation defined; anything else is a 417.
      if (expect.toLowerCase() !== '100-continue') {
        res.statusCode = 417;
        return void res.end();
      }
      if (!stream.headersSent) stream.additionalHeaders({ ':status': 100 });
    }
    handler(req, res);
  });
}
