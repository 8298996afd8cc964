/** The `config.timeouts` section: deadlines for clients, backends and mapping calls. */
import { z } from 'zod';
import { seconds } from './primitives.js';

export const TimeoutsSchema = z.strictObject({
  backendSec: seconds('No backend response headers within this time: 504').default(30),
  backendIdleSec: z
    .number()
    .min(0)
    .default(60)
    .describe(
      'Longest silence between two chunks of a backend response body once its headers came; the response is then cut (an upstream timeout in logs and metrics). 0 for none',
    ),
  mappingSec: seconds(
    'Per mapping call, counted once it has a connection: the headers within it, then the body within it again',
  ).default(10),
  clientHeaderSec: seconds('A client must send the complete request headers within this time, else 408').default(30),
  clientBodySec: seconds('Longest silence between two request body chunks, else 408').default(60),
  keepAliveSec: seconds(
    'Idle keep-alive connections are closed after this time; keep it above your load balancer idle timeout',
  ).default(72),
});
