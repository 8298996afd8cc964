/**
 * Rules on a route's `headers` (header rules) that the schema cannot express: names are HTTP
 * tokens and none is a header the gateway owns (framing, hop-by-hop, forwarding, the request id,
 * the WebSocket handshake), a name is set or removed but not both, and every placeholder in a
 * value refers to something the route has: `{param}` a route parameter, `{claims.NAME}` a token,
 * which a public route never has.
 */
import type { AddProblem } from './problems.js';
import { didYouMean } from './problems.js';
import { isRecord } from './raw-value.js';
import { templateParams } from './syntax/template.js';
import { HEADER_NAME, HOP_BY_HOP, INVALID_VALUE_CHAR, placeholders } from './syntax/headers.js';

/** Headers whose value the gateway decides on the way to a backend. */
const REQUEST_OWNED = new Set([
  ...HOP_BY_HOP,
  'host',
  'content-length',
  'expect',
  'x-request-id',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
]);
/** Headers whose value the gateway decides on the way to the client. */
const RESPONSE_OWNED = new Set([...HOP_BY_HOP, 'content-length', 'x-request-id']);
/** The handshake headers of a WebSocket upgrade, both ways. */
const WEBSOCKET_OWNED = new Set(['sec-websocket-key', 'sec-websocket-version', 'sec-websocket-accept']);

/** What the checks of one side of one route's header rules read. */
interface SideContext {
  readonly route: Record<string, unknown>;
  readonly side: 'request' | 'response';
  /** The route receives a valid token: `{claims.NAME}` has something to read. */
  readonly hasToken: boolean;
  /** The route's parameters; undefined when its pattern is not a template. */
  readonly params: readonly string[] | undefined;
  readonly here: (...rest: (string | number)[]) => (string | number)[];
  readonly label: string;
  readonly at: AddProblem;
}

/** Checks every route's `headers.request` and `headers.response`. */
export function headerRules(raw: Record<string, unknown>, at: AddProblem): void {
  if (!Array.isArray(raw.routes)) return;
  const config = isRecord(raw.config) ? raw.config : {};
  const auth = isRecord(config.auth) ? config.auth : {};
  raw.routes.forEach((route: unknown, index: number) => {
    if (!isRecord(route) || !isRecord(route.headers)) return;
    const hasToken =
      route.protected === true ||
      (route.protected !== false &&
        (route.require !== undefined || (auth.defaultProtected === true && route.public !== true)));
    const params = templateParams(route.route);
    for (const side of ['request', 'response'] as const) {
      const rules = route.headers[side];
      if (!isRecord(rules)) continue;
      const here = (...rest: (string | number)[]) => ['routes', index, 'headers', side, ...rest];
      sideRules(rules, { route, side, hasToken, params, here, label: `routes[${index}].headers.${side}`, at });
    }
  });
}

/** The checks of one side's `set` and `remove`. */
function sideRules(rules: Record<string, unknown>, c: SideContext): void {
  const { here, label, at } = c;
  const setNames = new Map<string, string>();
  if (isRecord(rules.set)) {
    for (const [name, value] of Object.entries(rules.set)) {
      const lower = name.toLowerCase();
      if (!HEADER_NAME.test(name)) at(here('set', name), `${label}.set: "${name}" is not a valid header name`);
      const why = ownedBy(lower, c);
      if (why !== undefined) at(here('set', name), `${label}.set: cannot set ${name}: ${why}`);
      const twice = setNames.get(lower);
      if (twice !== undefined)
        at(here('set', name), `${label}.set: ${name} and ${twice} are the same header (names are case-insensitive)`);
      setNames.set(lower, name);
      if (typeof value === 'string') checkValue(value, here('set', name), `${label}.set.${name}`, c);
    }
  }
  if (Array.isArray(rules.remove)) {
    rules.remove.forEach((name: unknown, i: number) => {
      if (typeof name !== 'string') return;
      const lower = name.toLowerCase();
      if (!HEADER_NAME.test(name)) at(here('remove', i), `${label}.remove: "${name}" is not a valid header name`);
      const why = ownedBy(lower, c);
      if (why !== undefined) at(here('remove', i), `${label}.remove: cannot remove ${name}: ${why}`);
      if (setNames.has(lower))
        at(here('remove', i), `${label}.remove: ${name} is also in set, which replaces it already; keep one`);
    });
  }
}

/** Why no rule may touch the header `lower` on this side of this route, or undefined. */
function ownedBy(lower: string, { route, side }: SideContext): string | undefined {
  const owned = side === 'request' ? REQUEST_OWNED : RESPONSE_OWNED;
  if (owned.has(lower)) return 'the gateway sets it itself';
  if (route.isWebSocket === true && WEBSOCKET_OWNED.has(lower)) return 'it belongs to the WebSocket handshake';
  // A mapped or streamed answer is asked for uncompressed: the gateway parses or flushes it.
  if (side === 'request' && lower === 'accept-encoding' && (Array.isArray(route.mapping) || route.isSSE === true))
    return 'the gateway asks this route for an uncompressed answer';
  return undefined;
}

/** A value template: no control character, and every placeholder something the route has. */
function checkValue(value: string, where: (string | number)[], label: string, c: SideContext): void {
  const { at, params } = c;
  if (INVALID_VALUE_CHAR.test(value)) at(where, `${label}: the value holds a control character (CR, LF...)`);
  const found = placeholders(value);
  if ('error' in found) {
    at(where, `${label}: ${found.error}`);
    return;
  }
  for (const p of found) {
    if ('claim' in p) {
      if (!c.hasToken)
        at(
          where,
          `${label}: {claims.${p.claim}} needs a token, but the route is public`,
          'set protected: true or require: on the route',
        );
    } else if (params !== undefined && !params.includes(p.param)) {
      const near = didYouMean(p.param, params);
      at(
        where,
        `${label}: {${p.param}} is not a parameter of route "${String(c.route.route)}"`,
        near ? `did you mean {${near}}?` : `claims are written {claims.${p.param}}`,
      );
    }
  }
}
