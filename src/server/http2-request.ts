/**
 * An HTTP/2 request as the gateway's pipeline reads an HTTP/1.1 one. Node's compatibility API
 * (`Http2ServerRequest`) already has the members of `IncomingMessage` the gateway uses; what a
 * proxy forwarding to HTTP/1.1 backends must translate (RFC 9113 8.3.1, 8.2.3) is done here,
 * once per request, so that no later stage has to know which protocol the client spoke:
 * - `rawHeaders` without the pseudo-headers (`:method`, `:path`...), which no HTTP/1.1 backend
 *   can take, and with `host` from `:authority`;
 * - `headers.host` set from `:authority`;
 * - the Cookie fields a client may split joined into one (`; `), as HTTP/1.1 allows only one;
 * - a body without `content-length` (HTTP/2 frames it itself) announced as
 *   `transfer-encoding: chunked` in `headers`, which is how HTTP/1.1 sends a body of unknown
 *   length, so that the size limit counts it and the backend call streams it.
 */
import { Http2ServerRequest, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { ReadableOptions } from 'node:stream';

const FORWARDABLE = Symbol('portico.forwardableRawHeaders');

export class GatewayH2Request extends Http2ServerRequest {
  constructor(
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    options: ReadableOptions,
    rawHeaders: readonly string[],
  ) {
    super(stream, headers, options, rawHeaders);
    const authority = headers[':authority'];
    if (typeof authority === 'string') headers.host = authority;
    if (headers['content-length'] === undefined && !stream.endAfterHeaders) headers['transfer-encoding'] = 'chunked';
    // One pass over the fields for both: the list to forward, and whether its host is in doubt.
    const out: string[] = typeof authority === 'string' ? ['host', authority] : [];
    let cookie: string | undefined;
    let hosts = 0;
    let conflict = false;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!;
      const value = rawHeaders[i + 1]!;
      if (name.charCodeAt(0) === COLON) continue;
      if (name === 'cookie') cookie = cookie === undefined ? value : `${cookie}; ${value}`;
      else if (name !== 'host') out.push(name, value);
      else {
        hosts++;
        if (typeof authority !== 'string') out.push(name, value);
        else if (value.toLowerCase() !== authority.toLowerCase()) conflict = true;
      }
    }
    if (cookie !== undefined) out.push('cookie', cookie);
    this[FORWARDABLE] = out;
    this.hostConflict = conflict || hosts > 1;
  }

  [FORWARDABLE]: string[];
  /**
   * A `host` field names another host than `:authority` (RFC 9113 8.3.1: malformed), or comes
   * twice (with or without `:authority`): refused like a bad Host (server/protocol-checks.ts),
   * never resolved by picking one. HTTP/2 field names are lowercase (RFC 9113 8.2.1).
   */
  readonly hostConflict: boolean;
}

// The getter is replaced on the prototype, once: TypeScript types `rawHeaders` as a property,
// which a subclass cannot redeclare as an accessor, and an own property per request would give
// every request object a shape of its own.
Object.defineProperty(GatewayH2Request.prototype, 'rawHeaders', {
  get(this: GatewayH2Request) {
    return this[FORWARDABLE];
  },
});

const COLON = 0x3a;
