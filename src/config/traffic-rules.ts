/**
 * Rules on a route's `split`, `stickyBy` and `mirror` that the schema cannot express: a split
 * replaces `service` (never both), each arm names exactly one service or named upstream, no arm
 * twice, some arm has a weight; `stickyBy` needs a split and reads `header:NAME`, `cookie:NAME` or
 * `claims.NAME`; the route kinds a split or a mirror cannot serve are refused
 * (docs/routing.md "Traffic splits" and "Mirroring").
 */
import type { AddProblem } from './problems.js';
import { didYouMean } from './problems.js';
import { isRecord } from './raw-value.js';
import { checkService } from './service-rule.js';
import { parseStickyKey } from './syntax/sticky-key.js';
import { parseService } from './syntax/service.js';

/** Checks the split, sticky key and mirror of every route. */
export function trafficRules(raw: Record<string, unknown>, at: AddProblem): void {
  if (!Array.isArray(raw.routes)) return;
  const upstreams = Object.keys(isRecord(raw.upstreams) ? raw.upstreams : {});
  raw.routes.forEach((route: unknown, index: number) => {
    if (!isRecord(route)) return;
    if (route.split !== undefined) splitRules(route, index, upstreams, at);
    if (route.stickyBy !== undefined) stickyRules(route, index, at);
    if (isRecord(route.mirror)) mirrorRules(route, route.mirror, index, upstreams, at);
  });
}

function splitRules(route: Record<string, unknown>, index: number, upstreams: string[], at: AddProblem): void {
  const label = `routes[${index}]`;
  const here = (...rest: (string | number)[]) => ['routes', index, ...rest];
  if (route.service !== undefined)
    at(here('service'), `${label}: a route has service or split, not both (the split's arms are its backends)`);
  if (route.backends !== undefined)
    at(here('split'), `${label}.split: an aggregated route cannot split (each of its backends is called)`);
  if (route.isWebSocket === true)
    at(
      here('split'),
      `${label}.split: a WebSocket route cannot split; give the canary a route of its own (docs/routing.md "Traffic splits")`,
    );
  if (!Array.isArray(route.split)) return;
  const seen = new Map<string, number>();
  let total = 0;
  route.split.forEach((arm: unknown, i: number) => {
    if (!isRecord(arm)) return;
    const where = here('split', i);
    const name = `${label}.split[${i}]`;
    if (typeof arm.weight === 'number') total += arm.weight;
    const hasService = arm.service !== undefined;
    const hasUpstream = arm.upstream !== undefined;
    if (hasService === hasUpstream) {
      at(where, `${name}: an arm names exactly one of service or upstream`);
      return;
    }
    let key: string | undefined;
    if (typeof arm.service === 'string') {
      checkService(arm.service, [...where, 'service'], at, `${name}.service`);
      const o = parseService(arm.service);
      key = upstreams.includes(arm.service) ? arm.service : 'error' in o ? undefined : o.key;
    } else if (typeof arm.upstream === 'string') {
      if (upstreams.includes(arm.upstream)) key = arm.upstream;
      else {
        const near = didYouMean(arm.upstream, upstreams);
        at(
          [...where, 'upstream'],
          `${name}.upstream: no upstream is named "${arm.upstream}"`,
          near === undefined ? 'declare it under upstreams:' : `did you mean "${near}"?`,
        );
      }
    }
    if (key === undefined) return;
    const first = seen.get(key);
    if (first !== undefined) at(where, `${name}: ${key} is also split[${first}]; list each backend once`);
    else seen.set(key, i);
  });
  if (route.split.length > 0 && total === 0)
    at(here('split'), `${label}.split: every weight is 0; no arm would get a request`);
}

function stickyRules(route: Record<string, unknown>, index: number, at: AddProblem): void {
  const label = `routes[${index}].stickyBy`;
  const where = ['routes', index, 'stickyBy'];
  if (route.split === undefined) at(where, `${label}: sticks clients to an arm of a split; this route has no split`);
  if (typeof route.stickyBy !== 'string') return;
  const key = parseStickyKey(route.stickyBy);
  if ('error' in key) at(where, `${label}: ${key.error}`);
}

function mirrorRules(
  route: Record<string, unknown>,
  mirror: Record<string, unknown>,
  index: number,
  upstreams: string[],
  at: AddProblem,
): void {
  const label = `routes[${index}].mirror`;
  const here = (...rest: (string | number)[]) => ['routes', index, 'mirror', ...rest];
  if (route.isSSE === true || route.isWebSocket === true)
    at(
      here(),
      `${label}: a streaming route (isSSE or isWebSocket) cannot be mirrored; a copy would hold a mirror slot for the whole stream`,
    );
  if (route.backends !== undefined)
    at(here(), `${label}: an aggregated route cannot be mirrored (it calls several backends; mirror one of them)`);
  if (typeof mirror.service !== 'string') return;
  if (upstreams.includes(mirror.service))
    at(
      here('service'),
      `${label}.service: "${mirror.service}" is a named upstream; a mirror is one service (host:port or an origin)`,
    );
  else checkService(mirror.service, here('service'), at, `${label}.service`);
}
