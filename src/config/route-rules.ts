/**
 * Rules on each route that the schema cannot express: the route pattern, the parameters it
 * shares with the backend path, the service, and which kinds of route exclude each other.
 */
import type { AddProblem } from './problems.js';
import type { MappingRuleFields, RouteFields } from './route-fields.js';
import { createRouteConflicts, isHttpMethod, type LocateKey } from './route-conflicts.js';
import { isPrefixPattern } from './router-path.js';
import { hostPatternProblem, normalHostPattern } from './syntax/host-pattern.js';
import { checkService } from './service-rule.js';
import { didYouMean } from './problems.js';
import { isTemplate, parseTemplate } from './syntax/template.js';

/** Paths the gateway answers itself, outside any route. */
export const RESERVED_PATHS = ['/health', '/ready', '/metrics'];

/**
 * Checks every route, and each against those before it, all under `prefix`; `locate` names the
 * place of an earlier route in a conflict.
 */
export function routeRules(routes: readonly RouteFields[], prefix: string, at: AddProblem, locate: LocateKey): void {
  const conflicts = createRouteConflicts(at, locate);
  for (const route of routes) {
    const label = `routes[${route.index}]`;
    const here = (key: string) => ['routes', route.index, key];
    let params: readonly string[] | undefined;
    const isPrefix = route.route !== undefined && isPrefixPattern(route.route);
    const hosts = route.hosts === undefined ? [] : hostPatterns(route.hosts, route.index, at);
    if (route.route !== undefined) {
      params = routePattern(route.route, prefix, `${label}.route`, here('route'), at);
      if (isHttpMethod(route.method)) conflicts.add(route.index, route.method, route.route, hosts);
    }
    if (route.path !== undefined) backendPath(route, params, label, at);
    if (route.path !== undefined && route.route !== undefined) restPlace(route.path, isPrefix, label, here('path'), at);
    if (isPrefix && route.hasBackends)
      at(
        here('backends'),
        `${label}.backends: a prefix route forwards the rest of its path to one backend; an aggregated route cannot be one`,
      );
    if (route.service !== undefined) checkService(route.service, here('service'), at, `${label}.service`);
    if (route.isSSE && route.isWebSocket)
      at(here('isWebSocket'), `${label}: a route cannot be both isSSE and isWebSocket`);
    if (route.isWebSocket && route.method !== undefined && route.method !== 'GET') {
      at(here('method'), `${label}.method: a WebSocket route must use GET (the upgrade request is a GET)`);
    }
    if (route.compressionOn && (route.isSSE || route.isWebSocket))
      at(
        here('compression'),
        `${label}.compression: a streaming route (isSSE or isWebSocket) is never compressed`,
        'an event held in the compressor would reach the client late; remove compression: true',
      );
    if (route.cacheOn) cacheRule(route, label, here('cache'), at);
    if (route.mapping !== undefined) {
      if (route.isSSE || route.isWebSocket)
        at(here('mapping'), `${label}.mapping: a streaming route (isSSE or isWebSocket) cannot have mapping rules`);
      route.mapping.forEach((rule, j) => {
        if (rule !== undefined) mappingRule(rule, ['routes', route.index, 'mapping', j], `${label}.mapping[${j}]`, at);
      });
    }
  }
}

/** Only GET answers are stored (RFC 9111 2: other methods' answers are rarely reusable), never a stream's. */
function cacheRule(route: RouteFields, label: string, path: readonly (string | number)[], at: AddProblem): void {
  if (route.isSSE || route.isWebSocket)
    at(path, `${label}.cache: a streaming route (isSSE or isWebSocket) is never cached`);
  else if (route.method !== undefined && route.method !== 'GET')
    at(
      path,
      `${label}.cache: only GET routes are cached (this one is ${route.method})`,
      'an unsafe request invalidates the cached answers of its URL by itself; remove cache: here',
    );
}

/** The route's parameters when its pattern is one the router reads as written, else undefined. */
function routePattern(
  route: string,
  prefix: string,
  label: string,
  path: readonly (string | number)[],
  at: AddProblem,
): readonly string[] | undefined {
  const t = parseTemplate(route);
  if (!route.startsWith('/')) at(path, `${label}: "${route}" must start with "/"`);
  if (!isTemplate(t)) at(path, `${label}: ${t.error}`);
  else if (/[?#]/.test(route))
    at(path, `${label}: must not contain "?" or "#"; client query parameters are forwarded automatically`);
  else if (/[()]/.test(route)) at(path, `${label}: "(" and ")" are not allowed; use {param} segments`);
  else if (route.includes('*') && !isPrefixPattern(route)) at(path, `${label}: ${starProblem(route)}`);
  else if (/\/:[A-Za-z_]/.test(route)) {
    // Express, Koa and fastify write parameters `:id`; here it would be literal text (404 for every request).
    const braced = route.replace(/\/:([A-Za-z_][A-Za-z0-9_-]*)/g, '/{$1}');
    at(path, `${label}: "${route}" uses ":param", which is literal text here`, `did you mean "${braced}"?`);
  } else if (/\}[^/.-]/.test(route)) {
    // The router ends a parameter only at "/", "." or "-": `/u/{id}x` would read `idx`.
    at(path, `${label}: a {param} must be followed by "/", "." or "-" (or end the route)`);
  } else {
    const dup = t.params.find((p, k) => t.params.indexOf(p) !== k);
    if (dup) at(path, `${label}: parameter {${dup}} appears twice`);
    if (prefix === '' && RESERVED_PATHS.includes(route))
      at(path, `${label}: "${route}" is answered by the gateway itself; set config.basePath or choose another route`);
    return t.params;
  }
  return undefined;
}

/** Why a `*` in a route pattern is not a prefix route's. */
function starProblem(route: string): string {
  const star = route.indexOf('*');
  if (star !== route.length - 1 || route.indexOf('*', star + 1) >= 0)
    return `"*" may only end a prefix route, once, as "/*" (the rest of the path goes there)`;
  const bare = route.slice(0, -1);
  return `a prefix route owns whole segments, so "*" must follow "/": write "${bare}/*" (it owns ${bare}/x, never ${bare}x)`;
}

/** The normalised `hosts:` of a route, each entry checked; a bad entry is left out. */
function hostPatterns(entries: readonly (string | undefined)[], index: number, at: AddProblem): string[] {
  const out: string[] = [];
  entries.forEach((entry, j) => {
    if (entry === undefined) return;
    const where = ['routes', index, 'hosts', j];
    const problem = hostPatternProblem(entry);
    if (problem !== undefined) return at(where, `routes[${index}].hosts[${j}]: "${entry}" ${problem}`);
    const name = normalHostPattern(entry);
    if (out.includes(name)) return at(where, `routes[${index}].hosts[${j}]: "${entry}" is listed twice`);
    out.push(name);
  });
  return out;
}

/**
 * Where the rest of a prefix route goes: the backend path holds one `*` as a whole segment
 * before any query (`/files/*`, `/*?v=1`), and only a prefix route's path holds one.
 */
function restPlace(
  path: string,
  isPrefix: boolean,
  label: string,
  where: readonly (string | number)[],
  at: AddProblem,
): void {
  const q = path.indexOf('?');
  const beforeQuery = q < 0 ? path : path.slice(0, q);
  const star = beforeQuery.indexOf('*');
  if (!isPrefix) {
    if (star >= 0)
      at(
        where,
        `${label}.path: "*" takes the rest of a prefix route, and this route does not end in "/*"`,
        'write %2A for a literal "*"',
      );
    return;
  }
  const next = beforeQuery[star + 1];
  if (star < 0) at(where, `${label}.path: a prefix route's path must say where the rest goes with "*" (/files/*)`);
  else if (beforeQuery[star - 1] !== '/' || (next !== undefined && next !== '/') || beforeQuery.includes('*', star + 1))
    at(where, `${label}.path: "*" must be one whole segment of the path ("/files/*" or "/files/*/raw"), once`);
}

/** The backend path: a valid template that uses every route parameter and no other. */
function backendPath(route: RouteFields, params: readonly string[] | undefined, label: string, at: AddProblem): void {
  const path = route.path!;
  const t = parseTemplate(path);
  const here = (key: string) => ['routes', route.index, key];
  if (!path.startsWith('/')) at(here('path'), `${label}.path: "${path}" must start with "/"`);
  if (!isTemplate(t)) {
    at(here('path'), `${label}.path: ${t.error}`);
    return;
  }
  if (params === undefined) return;
  for (const p of new Set(t.params)) {
    if (!params.includes(p)) {
      const near = didYouMean(p, params);
      at(
        here('path'),
        `${label}.path: {${p}} is not a parameter of route "${String(route.route)}"`,
        near ? `did you mean {${near}}?` : undefined,
      );
    }
  }
  for (const p of params) {
    if (!t.params.includes(p))
      at(
        here('route'),
        `${label}.route: {${p}} is not used in path "${path}" (every parameter must appear in both route and path)`,
      );
  }
}

function mappingRule(rule: MappingRuleFields, path: readonly (string | number)[], label: string, at: AddProblem): void {
  if (rule.path !== undefined) {
    const t = parseTemplate(rule.path);
    if (!rule.path.startsWith('/')) at([...path, 'path'], `${label}.path: "${rule.path}" must start with "/"`);
    if (!isTemplate(t)) at([...path, 'path'], `${label}.path: ${t.error}`);
    else if (rule.batch !== undefined && new Set(t.params).size !== 1)
      at(
        [...path, 'path'],
        `${label}.path: a batched rule reads one field, so its path has exactly one {field}; "${rule.path}" has ${new Set(t.params).size}`,
      );
  }
  if (rule.batch !== undefined) batchRule(rule.batch, [...path, 'batch'], `${label}.batch`, at);
  if (rule.service !== undefined) checkService(rule.service, [...path, 'service'], at, `${label}.service`);
}

/** Characters a query may hold as written (RFC 3986 pchar, `/` and `?`), for a batch separator. */
const URL_SAFE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/?]+$/;

function batchRule(
  batch: NonNullable<MappingRuleFields['batch']>,
  path: readonly (string | number)[],
  label: string,
  at: AddProblem,
): void {
  if (batch.path !== undefined) {
    const t = parseTemplate(batch.path);
    if (!batch.path.startsWith('/')) at([...path, 'path'], `${label}.path: "${batch.path}" must start with "/"`);
    if (!isTemplate(t)) at([...path, 'path'], `${label}.path: ${t.error}`);
    else if (t.params.length !== 1 || t.params[0] !== 'values')
      at(
        [...path, 'path'],
        `${label}.path: must hold {values} once and no other placeholder (got ${t.params.map((p) => `{${p}}`).join(', ') || 'none'})`,
      );
  }
  if (batch.separator !== undefined && !URL_SAFE.test(batch.separator))
    at(
      [...path, 'separator'],
      `${label}.separator: ${JSON.stringify(batch.separator)} must be characters a URL carries as written (such as , ; | or &ids=)`,
    );
}
