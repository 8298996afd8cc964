/**
 * Rules on aggregated routes (`backends:`) that the schema cannot express, and the rule that
 * every other route has a `service` and a `path`. An aggregated route is a GET, has no service,
 * path or streaming of its own, and each backend has a valid service, a path that uses only the
 * route's parameters (every parameter used by some backend), valid field rules and a group no
 * other backend has.
 */
import type { AddProblem } from './problems.js';
import { didYouMean } from './problems.js';
import { isRecord } from './raw-value.js';
import { checkService } from './service-rule.js';
import { fieldRules } from './field-rules.js';
import { isTemplate, parseTemplate, templateParams } from './syntax/template.js';

/** Checks every route's `backends`, or its `service` and `path` when it has none. */
export function aggregateRules(raw: Record<string, unknown>, at: AddProblem): void {
  if (!Array.isArray(raw.routes)) return;
  raw.routes.forEach((route: unknown, index: number) => {
    if (!isRecord(route)) return;
    const label = `routes[${index}]`;
    if (route.backends === undefined) {
      // A split's arms are its services.
      for (const key of route.split === undefined ? ['service', 'path'] : ['path'])
        if (route[key] === undefined && !misspelt(route, key))
          at(['routes', index], `${label}: missing required key "${key}"`);
      return;
    }
    const here = (...rest: (string | number)[]) => ['routes', index, ...rest];
    for (const key of ['service', 'path', 'isSSE', 'isWebSocket', 'requestBuffering', 'request'])
      if (route[key] !== undefined)
        at(here(key), `${label}.${key}: an aggregated route has backends instead (remove ${key})`);
    if (typeof route.method === 'string' && route.method !== 'GET')
      at(
        here('method'),
        `${label}.method: an aggregated route must use GET (its backends are read, never sent a body)`,
      );
    if (!Array.isArray(route.backends)) return;
    const params = templateParams(route.route);
    const used = new Set<string>();
    const groups = new Map<string, number>();
    route.backends.forEach((backend: unknown, i: number) => {
      if (!isRecord(backend)) return;
      const where = ['routes', index, 'backends', i];
      const name = `${label}.backends[${i}]`;
      if (typeof backend.service === 'string')
        checkService(backend.service, [...where, 'service'], at, `${name}.service`);
      if (typeof backend.path === 'string') {
        const path = backend.path;
        const t = parseTemplate(path);
        if (!path.startsWith('/')) at([...where, 'path'], `${name}.path: "${path}" must start with "/"`);
        if (!isTemplate(t)) at([...where, 'path'], `${name}.path: ${t.error}`);
        else if (params !== undefined)
          for (const p of t.params) {
            used.add(p);
            if (params.includes(p)) continue;
            const near = didYouMean(p, params);
            at(
              [...where, 'path'],
              `${name}.path: {${p}} is not a parameter of route "${String(route.route)}"`,
              near ? `did you mean {${near}}?` : undefined,
            );
          }
      }
      if (typeof backend.target === 'string' && backend.target.split('.').some((n) => n === ''))
        at([...where, 'target'], `${name}.target: "${backend.target}" has an empty field name (a dot path is a.b.c)`);
      if (typeof backend.group === 'string') {
        const first = groups.get(backend.group);
        if (first !== undefined)
          at(
            [...where, 'group'],
            `${name}.group: "${backend.group}" is also backends[${first}]'s group; each answer needs its own key`,
          );
        else groups.set(backend.group, i);
      }
      fieldRules(backend, where, name, at);
    });
    for (const p of params ?? [])
      if (!used.has(p))
        at(here('route'), `${label}.route: {${p}} is used by no backend path (every parameter must reach a backend)`);
  });
}

/** A key written close to `key` (reported as unknown with a did-you-mean): not missing as well. */
function misspelt(route: Record<string, unknown>, key: string): boolean {
  return Object.keys(route).some((k) => k !== key && didYouMean(k, [key]) === key);
}
