/**
 * Rules on the per-route auth keys that the schema cannot express: `public`, `protected` and
 * `require` must not contradict each other, and a route that asks for a token needs a way to
 * validate one (`config.auth.secret`, `jwksUrl`, `authService` or `introspection`).
 */
import type { AddProblem } from './problems.js';
import { isRecord } from './raw-value.js';

/** Checks every route's `public`, `protected` and `require` against each other and `config.auth`. */
export function authorizationRules(raw: Record<string, unknown>, at: AddProblem): void {
  if (!Array.isArray(raw.routes)) return;
  const config = isRecord(raw.config) ? raw.config : {};
  const auth = isRecord(config.auth) ? config.auth : {};
  const canValidate = Boolean(auth.secret || auth.jwksUrl || auth.authService || auth.introspection || auth.apiKey);
  raw.routes.forEach((route: unknown, index: number) => {
    if (!isRecord(route)) return;
    const label = `routes[${index}]`;
    const hasRequire = route.require !== undefined;
    if (route.public === true && route.protected === true)
      at(['routes', index, 'protected'], `${label}: public: true and protected: true contradict each other`);
    if (hasRequire && route.public === true)
      at(['routes', index, 'require'], `${label}.require: a public route has no token to check; remove public: true`);
    if (hasRequire && route.protected === false)
      at(['routes', index, 'require'], `${label}.require: needs a token, but the route says protected: false`);
    const asks = route.protected === true ? 'protected' : hasRequire ? 'require' : undefined;
    if (asks !== undefined && !canValidate)
      at(
        ['routes', index, asks],
        `${label}.${asks}: the route needs a valid token, but no config.auth.secret, jwksUrl, authService, introspection or apiKey is set to authenticate requests`,
      );
  });
}
