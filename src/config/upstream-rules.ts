/**
 * Rules on named upstreams (`upstreams:`) that the schema cannot express: every target is a valid
 * service, no target is listed twice, the list is not empty, and a `service` that is close to an
 * upstream name without being one is reported (a misspelt name would otherwise be taken for a
 * host name and fail only when called).
 */
import type { AddProblem } from './problems.js';
import { didYouMean } from './problems.js';
import { isRecord } from './raw-value.js';
import { parseService } from './syntax/service.js';

/** Checks `upstreams` and every `service` that may name one. */
export function upstreamRules(raw: Record<string, unknown>, at: AddProblem): void {
  const upstreams = isRecord(raw.upstreams) ? raw.upstreams : {};
  const names = Object.keys(upstreams);
  for (const [name, upstream] of Object.entries(upstreams)) {
    if (!isRecord(upstream) || !Array.isArray(upstream.targets)) continue;
    const label = `upstreams.${name}.targets`;
    if (upstream.targets.length === 0)
      at(['upstreams', name, 'targets'], `${label}: an upstream needs at least one target (host:port)`);
    const seen = new Map<string, number>();
    upstream.targets.forEach((t: unknown, i: number) => {
      const text = typeof t === 'string' ? t : isRecord(t) && typeof t.target === 'string' ? t.target : undefined;
      if (text === undefined) return;
      const where =
        typeof t === 'string' ? ['upstreams', name, 'targets', i] : ['upstreams', name, 'targets', i, 'target'];
      if (upstream.http2 === true && !/^https:\/\//i.test(text))
        at(
          where,
          `${label}[${i}]: http2: true needs https:// targets (HTTP/2 is negotiated over TLS); "${text}" is plain HTTP`,
        );
      const o = parseService(text);
      if ('error' in o) {
        at(where, `${label}[${i}]: ${o.error}`);
        return;
      }
      const first = seen.get(o.key);
      if (first !== undefined) at(where, `${label}[${i}]: ${o.key} is also targets[${first}]; list each target once`);
      else seen.set(o.key, i);
    });
  }
  if (names.length === 0 || !Array.isArray(raw.routes)) return;
  const check = (service: unknown, where: (string | number)[], label: string) => {
    if (typeof service !== 'string' || names.includes(service) || /[:./]/.test(service)) return;
    const near = didYouMean(service, names);
    if (near !== undefined) at(where, `${label}: no upstream is named "${service}"`, `did you mean "${near}"?`);
  };
  raw.routes.forEach((route: unknown, i: number) => {
    if (!isRecord(route)) return;
    check(route.service, ['routes', i, 'service'], `routes[${i}].service`);
    for (const [key, list] of [
      ['mapping', route.mapping],
      ['backends', route.backends],
    ] as const)
      if (Array.isArray(list))
        list.forEach((entry: unknown, j: number) => {
          if (isRecord(entry))
            check(entry.service, ['routes', i, key, j, 'service'], `routes[${i}].${key}[${j}].service`);
        });
  });
}
