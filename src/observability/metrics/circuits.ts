/**
 * Circuit breakers: 'circuit:change' into `portico_circuit_transitions_total`; each origin's
 * current state read at scrape time into `portico_circuit_state`.
 */
import { Gauge } from 'prom-client';
import { counters } from './shared.js';
import type { MetricsModule } from './types.js';

const CIRCUIT_STATES = ['closed', 'open', 'half-open'] as const;

// prettier-ignore
const SERIES = {
  transitions: ['portico_circuit_transitions_total', 'Circuit state changes, by origin and new state', ['origin', 'state']],
} as const;

export const circuitMetrics: MetricsModule = (registry, sources) => {
  const { transitions } = counters(registry, SERIES);
  if (sources.circuits !== undefined) {
    const circuits = sources.circuits;
    new Gauge({
      registers: [registry],
      name: 'portico_circuit_state',
      help: 'Circuit state per backend origin: 1 for the current state (closed, open, half-open), 0 for the others',
      labelNames: ['origin', 'state'] as const,
      aggregator: 'max',
      collect() {
        this.reset();
        for (const c of circuits())
          for (const s of CIRCUIT_STATES) this.set({ origin: c.origin, state: s }, c.state === s ? 1 : 0);
      },
    });
  }
  return {
    'circuit:change': (e) => transitions.inc({ origin: e.origin, state: e.to }),
  };
};
