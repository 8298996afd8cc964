/** The one rule for every `service:` key (routes, mapping rules, the auth service). */
import type { AddProblem } from './problems.js';
import { formatPath } from './raw-value.js';
import { isOrigin, parseService } from './syntax/service.js';

/** Reports a service that is not `host`, `host:port` or an http(s) origin. */
export function checkService(
  service: string,
  path: readonly (string | number)[],
  at: AddProblem,
  label = formatPath(path),
): void {
  const o = parseService(service);
  if (!isOrigin(o)) at(path, `${label}: ${o.error}`);
}
