/**
 * The `config.admission` section and a route's `admission`: limits on requests in flight
 * (docs/overload.md). Off unless a `maxInFlight` is set.
 */
import { z } from 'zod';

const maxInFlight = (d: string) => z.int().min(1).describe(d);

export const AdmissionSchema = z.strictObject({
  maxInFlight: maxInFlight(
    'Requests the gateway serves at once, over every route; one more gets 503 GW_OVERLOADED at once (like nginx limit_conn, Envoy max_requests); default none',
  ).optional(),
  retryAfterSec: z
    .int()
    .min(1)
    .max(3600)
    .default(1)
    .describe('The Retry-After of an admission refusal, in whole seconds'),
});

export const RouteAdmissionSchema = z.strictObject({
  maxInFlight: maxInFlight(
    'Requests this route serves at once; one more gets 503 GW_OVERLOADED at once, whatever config.admission.maxInFlight leaves',
  ),
});

export type AdmissionConfig = z.output<typeof AdmissionSchema>;
