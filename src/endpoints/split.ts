/**
 * The endpoint of a split route (docs/routing.md "Traffic splits"): it picks one arm per request,
 * once, and hands the exchange to that arm's own step: the route's circuit and endpoint built
 * with the arm's backend in place of the route's, so each arm has its own pool, circuit breaker
 * and retries. The route's other layers (CORS, limits, auth, buffering, validation, mirror) ran
 * before, once.
 */
import type { SplitSpec } from '../config/types.js';
import type { CompiledRoute, Step } from '../pipeline/types.js';
import type { EventBus } from '../observability/events.js';
import { createArmChooser } from '../split/choose-arm.js';
import { compileStickyKey } from '../split/sticky-key.js';

/**
 * Sends each request to the arm its sticky key holds it to, else to the next arm by weight.
 * `armStep`: the step of the route as it would be with `armRoute`'s backend (pipeline/build.ts).
 */
export function splitEndpoint(
  route: CompiledRoute,
  split: SplitSpec,
  events: EventBus,
  armStep: (armRoute: CompiledRoute) => Step,
): Step {
  const arms = split.arms.map((arm) => ({
    name: arm.name,
    step: armStep({ ...route, service: arm.name, origin: arm.origin }),
  }));
  const chooser = createArmChooser(split.arms);
  const stickyKey = split.stickyBy === undefined ? undefined : compileStickyKey(split.stickyBy);
  const routeId = route.id;
  return (ex) => {
    const key = stickyKey?.(ex);
    const arm = arms[key === undefined ? chooser.next() : chooser.forKey(key)]!;
    events.emit('split:choice', { routeId, arm: arm.name });
    return arm.step(ex);
  };
}
