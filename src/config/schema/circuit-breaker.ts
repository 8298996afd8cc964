/** The `config.circuitBreaker` section: one circuit per backend origin. */
import { z } from 'zod';
import { seconds } from './primitives.js';

/** Backend statuses that count as failures for a circuit: a list of 5xx, where absent every 5xx. */
export const FailureStatusesSchema = z
  .array(z.int().min(500).max(599))
  .describe(
    'Backend statuses that count as failures for the circuit (default: every 5xx). Another 5xx counts neither way; [] leaves only no answer at all (refused, reset, timeout) as a failure',
  );

export const CircuitBreakerSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(false)
    .describe('One circuit per backend origin (scheme://host:port); false: no circuit at all'),
  maxFailures: z.int().min(1).default(5).describe('Consecutive failures before the circuit opens'),
  timeoutSec: seconds('Seconds the circuit stays open before probing').default(30),
  halfOpenRequests: z.int().min(1).default(1).describe('Probe requests allowed while half-open'),
  failureStatuses: FailureStatusesSchema.optional(),
});
