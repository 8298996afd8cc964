/** A named upstream: one entry of `upstreams`, a backend with several targets. */
import { z } from 'zod';
import { seconds } from './primitives.js';
import { UpstreamTargetsTlsSchema } from './tls.js';

export const UpstreamSchema = z
  .strictObject({
    targets: z
      .array(
        z.union([
          z.string().min(1),
          z.strictObject({
            target: z.string().min(1).describe('host:port, http://host:port or https://host'),
            weight: z.int().min(1).max(1000).default(1).describe('Share of the traffic, relative to the other targets'),
          }),
        ]),
      )
      .describe('The instances: host:port, http://host:port or https://host, or {target, weight}'),
    balance: z
      .enum(['least-request', 'round-robin', 'random'])
      .default('least-request')
      .describe(
        'How a call picks its target: least-request (the fewer in-flight of two random targets), round-robin, random (both weighted)',
      ),
    outlierDetection: z
      .strictObject({
        enabled: z.boolean().default(true).describe('Eject a target that keeps failing'),
        consecutiveFailures: z
          .int()
          .min(1)
          .default(5)
          .describe('Connection failures or 5xx in a row that eject a target'),
        baseEjectionSec: seconds('First ejection time; it doubles each time the target is ejected again').default(10),
        maxEjectionPercent: z
          .int()
          .min(0)
          .max(100)
          .default(50)
          .describe('Most targets ejected at once, as a share of the targets'),
      })
      .prefault({})
      .describe('Passive health: targets that fail in a row get no traffic for a while'),
    http2: z
      .boolean()
      .default(false)
      .describe(
        'Speak HTTP/2 to the targets (https:// targets only, negotiated by ALPN: a target that does not offer h2 gets HTTP/1.1)',
      ),
    tls: UpstreamTargetsTlsSchema.optional().describe(
      'TLS to the https:// targets: CA, verification and a client certificate (mTLS), over config.upstreamTls (docs/upstreams.md)',
    ),
    dnsRefreshSec: seconds(
      'Host name targets are looked up again this often; each address becomes a target (a headless service)',
    ).default(30),
    healthCheck: z
      .strictObject({
        healthPath: z.string().startsWith('/').describe('GET on each target; a 2xx or 3xx answer is a pass'),
        intervalSec: seconds('Time between two checks of a target').default(10),
        timeoutSec: seconds('A check without a complete answer within this time fails').default(2),
        healthyThreshold: z.int().min(1).default(2).describe('Passes in a row that bring a target back'),
        unhealthyThreshold: z.int().min(1).default(3).describe('Failures in a row that take a target out'),
      })
      .optional()
      .describe('Active health checks: unhealthy targets get no traffic (docs/upstreams.md)'),
  })
  .describe('A named backend with several instances');

export type UpstreamConfig = z.output<typeof UpstreamSchema>;
