/**
 * The only catalogue of gateway-generated errors. Every entry is documented in docs/errors.md
 * (a unit test keeps the two in step). Bodies are `{"error": message, "success": false}`
 * (docs/design-decisions.md); the code travels in the `X-Portico-Error` header for operators and scripts.
 */
export const ERRORS = {
  GW_ROUTE_NOT_FOUND: { status: 404, message: 'No route matches this path' },
  GW_HOST_NOT_FOUND: { status: 404, message: 'No route serves this host' },
  GW_MISDIRECTED_REQUEST: { status: 421, message: 'This connection cannot serve this host' },
  GW_METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed on this route' },
  GW_AUTH_MISSING: { status: 401, message: 'Missing bearer token' },
  GW_AUTH_INVALID: { status: 401, message: 'Invalid or expired token' },
  GW_AUTH_UNAVAILABLE: { status: 503, message: 'Authentication service unavailable' },
  GW_AUTH_AMBIGUOUS: { status: 400, message: 'Several Authorization headers' },
  GW_AUTH_TOKEN_REPEATED: { status: 400, message: 'A token cookie or query parameter sent twice' },
  GW_AUTH_FORBIDDEN: { status: 403, message: 'The token does not grant access to this route' },
  GW_AUTH_KEY_MISSING: { status: 401, message: 'Missing API key' },
  GW_AUTH_KEY_INVALID: { status: 401, message: 'Invalid API key' },
  GW_AUTH_CREDENTIALS_AMBIGUOUS: { status: 400, message: 'Send one credential: an API key or a token, once' },
  GW_RATE_LIMITED: { status: 429, message: 'Too many requests' },
  GW_QUOTA_EXCEEDED: { status: 429, message: 'Quota exceeded' },
  GW_CIRCUIT_OPEN: { status: 503, message: 'Service temporarily unavailable (circuit open)' },
  GW_OVERLOADED: { status: 503, message: 'The gateway is serving as many requests as it may; retry later' },
  GW_UPSTREAM_UNREACHABLE: { status: 502, message: 'Backend service unreachable' },
  GW_UPSTREAM_TIMEOUT: { status: 504, message: 'Backend service did not answer in time' },
  GW_AGGREGATE_FAILED: { status: 502, message: 'No backend of this aggregated route answered' },
  GW_UPSTREAM_BAD_UPGRADE: { status: 502, message: 'Backend answered the WebSocket upgrade with an invalid handshake' },
  GW_UPSTREAM_BAD_RESPONSE: { status: 502, message: 'Backend answer could not be relayed' },
  GW_UPGRADE_REQUIRED: { status: 426, message: 'This route only accepts WebSocket upgrades' },
  GW_ORIGIN_NOT_ALLOWED: { status: 403, message: 'Origin not allowed' },
  GW_IP_FORBIDDEN: { status: 403, message: 'Client address not allowed' },
  GW_BODY_TOO_LARGE: { status: 413, message: 'Request body too large' },
  GW_BODY_SPILL_CLIENT_LIMIT: { status: 429, message: 'Too many upload bytes in progress from this client' },
  GW_BODY_SPILL_FULL: { status: 503, message: 'The gateway is buffering too many uploads' },
  GW_HEADERS_TOO_LARGE: { status: 431, message: 'Request headers too large' },
  GW_CLIENT_TIMEOUT: { status: 408, message: 'Request not received in time' },
  GW_BAD_REQUEST: { status: 400, message: 'Malformed HTTP request' },
  GW_BAD_HOST: { status: 400, message: 'Missing, repeated or invalid Host header' },
  GW_TRANSFER_CODING_UNSUPPORTED: { status: 501, message: 'Transfer-Encoding not supported' },
  GW_HTTP_VERSION_UNSUPPORTED: { status: 505, message: 'HTTP version not supported' },
  GW_METHOD_UNSUPPORTED: { status: 405, message: 'Method not supported by this gateway' },
  GW_GRPC_HTTP_VERSION: {
    status: 505,
    message: 'gRPC requires HTTP/2 (TLS with ALPN h2, or h2c by prior knowledge)',
  },
  GW_REQUEST_INVALID: { status: 400, message: "Request body does not match the route's schema" },
  GW_REQUEST_NOT_JSON: { status: 415, message: 'Request body must be JSON' },
  GW_PATH_PARAM_INVALID: { status: 400, message: 'A path parameter may not be a dot-segment (. or ..)' },
  GW_PATH_REST_INVALID: {
    status: 400,
    message:
      'The path under a prefix route may not hold dot-segments, empty segments, encoded slashes, backslashes or NUL',
  },
  GW_CACHE_ONLY_IF_CACHED: {
    status: 504,
    message: 'The request asked for a cached answer only (only-if-cached) and none is stored',
  },
  GW_GATEWAY_DRAINING: { status: 503, message: 'Gateway is shutting down' },
  GW_INTERNAL: { status: 500, message: 'Internal gateway error' },
  GW_METRICS_NOT_PUBLIC: { status: 403, message: 'Metrics are not served to this client on this port' },
  GW_ADMIN_UNAUTHORIZED: { status: 401, message: 'Admin token missing or invalid' },
  GW_ADMIN_HOST_NOT_ALLOWED: {
    status: 403,
    message: 'Without a token the admin listener answers only to an IP address or localhost',
  },
  GW_ADMIN_PURGE_INVALID: {
    status: 400,
    message: 'A purge names one of url, prefix or route, as a JSON object',
  },
  GW_PLUGIN_FAILED: { status: 500, message: 'A plugin of this route failed' },
  GW_PLUGIN_TIMEOUT: { status: 504, message: 'A plugin of this route did not finish in time' },
  GW_PLUGIN_RESPONSE_TOO_LARGE: {
    status: 502,
    message: 'The backend answer is larger than a plugin of this route may read',
  },
  GW_PLUGIN_RESPONSE_INVALID: {
    status: 502,
    message: 'The backend answer is not the JSON a plugin of this route reads',
  },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;
