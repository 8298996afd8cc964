/** The `config.http2` section: HTTP/2 on the listener, over TLS or by prior knowledge. */
import { z } from 'zod';

export const Http2Schema = z.strictObject({
  enabled: z
    .boolean()
    .default(true)
    .describe('Offer HTTP/2 (ALPN h2) on the TLS listener; HTTP/1.1 clients are served on the same port'),
  cleartext: z
    .boolean()
    .default(false)
    .describe(
      'Accept HTTP/2 by prior knowledge (h2c) on a plain listener, beside HTTP/1.1: behind a load balancer that terminates TLS',
    ),
  maxConcurrentStreams: z
    .int()
    .min(1)
    .max(10_000)
    .default(128)
    .describe('Requests one HTTP/2 connection may have in flight at once'),
});
