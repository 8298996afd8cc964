/** The `config.shutdown` section: how a stopping gateway hands its traffic to the other replicas. */
import { z } from 'zod';

export const ShutdownSchema = z.strictObject({
  drainDelaySec: z
    .number()
    .min(0)
    .max(600)
    .default(0)
    .describe(
      'On SIGTERM, keep serving this long with /ready answering 503 and Connection: close on every answer (HTTP/2: GOAWAY), so that load balancers stop choosing the replica and clients leave their connections cleanly; then stop accepting and drain. 0 stops accepting at once; SIGINT never waits (docs/deploy.md)',
    ),
});
