/**
 * Rules on gRPC routes (`grpc: true`) that the schema cannot express: a gRPC call is a POST whose
 * messages stream both ways untouched, so a gRPC route cannot be another kind of route (mapped,
 * filtered, aggregated, validated, SSE or WebSocket), and its clients must be able to reach it
 * over HTTP/2: TLS with HTTP/2 on, or h2c (`http2.cleartext`) on a plain listener.
 */
import type { AddProblem } from './problems.js';
import { isRecord } from './raw-value.js';
import { routePrefix } from './settings-rules.js';

/** Keys of other route kinds, and why a gRPC route cannot have them. */
const OTHER_KINDS: readonly (readonly [key: string, why: string])[] = [
  ['mapping', 'mapping rules read JSON answers'],
  ['backends', 'an aggregated route merges JSON answers'],
  ['response', 'field rules filter JSON answers'],
  ['request', 'request.schema checks a JSON body'],
  ['isSSE', 'an SSE route relays an event stream'],
  ['isWebSocket', 'a WebSocket route tunnels an HTTP/1.1 upgrade'],
  ['compression', 'gRPC compresses its messages itself (grpc-encoding)'],
  ['mirror', 'mirrored copies are HTTP/1.1 calls, which a gRPC server does not take'],
];

/**
 * Checks every route with `grpc: true`, and that the listener serves HTTP/2 to reach it; warns of
 * a `basePath`, which gRPC clients do not add to the `/package.Service/Method` they call.
 */
export function grpcRules(raw: Record<string, unknown>, at: AddProblem, warn: AddProblem): void {
  if (!Array.isArray(raw.routes)) return;
  const config = isRecord(raw.config) ? raw.config : {};
  const listener = http2Listener(config);
  const prefix = routePrefix(raw);
  raw.routes.forEach((route: unknown, index: number) => {
    if (!isRecord(route) || route.grpc !== true) return;
    const label = `routes[${index}]`;
    for (const [key, why] of OTHER_KINDS) {
      const value = route[key];
      if (value === undefined || value === false) continue;
      at(['routes', index, key], `${label}.${key}: a gRPC route (grpc: true) cannot have it: ${why}`);
    }
    if (typeof route.method === 'string' && route.method !== 'POST')
      at(['routes', index, 'method'], `${label}.method: a gRPC route must use POST (every gRPC call is a POST)`);
    if (prefix !== '')
      warn(
        ['routes', index, 'grpc'],
        `${label}.grpc: gRPC clients call /package.Service/Method, which config.basePath "${prefix}" puts out of reach`,
        'set config.basePath: "/"',
      );
    if (listener !== undefined)
      at(['routes', index, 'grpc'], `${label}.grpc: gRPC needs HTTP/2, and ${listener}`, listenerHint(config));
  });
}

/** Why the listener cannot take HTTP/2, or undefined when it can. */
function http2Listener(config: Record<string, unknown>): string | undefined {
  const http2 = isRecord(config.http2) ? config.http2 : {};
  if (isRecord(config.tls)) return http2.enabled === false ? 'config.http2.enabled is false' : undefined;
  return http2.cleartext === true ? undefined : 'the plain listener serves HTTP/1.1 only';
}

function listenerHint(config: Record<string, unknown>): string {
  return isRecord(config.tls)
    ? 'remove config.http2.enabled: false (HTTP/2 over TLS, ALPN h2)'
    : 'set config.http2.cleartext: true (h2c by prior knowledge, what grpc-js uses with createInsecure()) or configure config.tls';
}
