/**
 * One circuit per backend origin (`scheme://host:port`), shared by every route, mapping rule and
 * WebSocket upgrade that calls it (docs/design-decisions.md). Made once per process: circuit state survives a
 * reload for origins that still exist. The registry holds the current `config.circuitBreaker`
 * and every breaker reads it through a getter, so a reload that changes the settings reaches
 * existing circuits without losing their state.
 */
import type { CompiledConfig } from '../config/types.js';
import type { EventBus } from '../observability/events.js';
import { createBreaker, type CircuitChange, type CircuitSettings, type StatefulBreaker } from './breaker.js';
import { type CircuitBreaker, type CircuitState } from './types.js';

/** One circuit as metrics and status pages show it. */
export interface CircuitSnapshot {
  readonly origin: string;
  readonly state: CircuitState;
  readonly consecutiveFailures: number;
}

export interface CircuitRegistry {
  /** The circuit of an origin key (`Origin.key`), created closed on first use. */
  forOrigin(origin: string): CircuitBreaker;
  /** Settings of a new configuration. Disabling closes every circuit (no stale state on re-enable). */
  configure(settings: CircuitSettings): void;
  /** The origins of the configuration being served: all listed (created if new); the others are closed and unlisted. */
  retain(origins: Iterable<string>): void;
  /** Every listed circuit's origin, state and consecutive failures, sorted by origin. */
  snapshot(): CircuitSnapshot[];
}

export interface CircuitRegistryOptions {
  readonly settings: CircuitSettings;
  readonly events?: EventBus;
  /** Milliseconds, monotonic; injected by tests. */
  readonly now?: () => number;
}

/** Creates the per-process circuit registry. */
export function createCircuitRegistry(options: CircuitRegistryOptions): CircuitRegistry {
  let settings = options.settings;
  const current = () => settings;
  const breakers = new Map<string, StatefulBreaker>();
  const listed = new Set<string>();
  const events = options.events;
  const onChange = events === undefined ? undefined : (change: CircuitChange) => events.emit('circuit:change', change);

  function forOrigin(origin: string): StatefulBreaker {
    let b = breakers.get(origin);
    if (b === undefined) {
      b = createBreaker({ origin, settings: current, now: options.now, onChange });
      breakers.set(origin, b);
    }
    listed.add(origin);
    return b;
  }

  return {
    forOrigin,
    configure(next) {
      const wasEnabled = settings.enabled;
      settings = next;
      if (wasEnabled && !next.enabled) for (const b of breakers.values()) b.reset();
    },
    retain(origins) {
      const keep = new Set(origins);
      for (const [origin, b] of breakers) if (!keep.has(origin) && listed.delete(origin)) b.reset();
      for (const origin of keep) forOrigin(origin);
    },
    snapshot() {
      return [...listed].sort().map((origin) => {
        const b = breakers.get(origin)!;
        return { origin, state: b.state, consecutiveFailures: b.consecutiveFailures };
      });
    },
  };
}

/** Every origin a configuration calls: routes, aggregated routes' backends and mapping rules. */
export function originsOf(config: CompiledConfig): Set<string> {
  const origins = new Set<string>();
  for (const route of config.routes) {
    origins.add(route.origin.key);
    for (const backend of route.backends) origins.add(backend.origin.key);
    for (const rule of route.mapping) origins.add(rule.origin.key);
    for (const arm of route.split?.arms ?? []) origins.add(arm.origin.key);
  }
  return origins;
}
