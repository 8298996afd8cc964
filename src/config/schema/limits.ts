/** The `config.limits` section: sizes of request heads and bodies, mapped bodies, connections. */
import { z } from 'zod';

const MiB = 1024 * 1024;

export const LimitsSchema = z.strictObject({
  maxMappingBodyBytes: z
    .int()
    .positive()
    .default(10 * MiB)
    .describe('Larger primary bodies are returned unmapped'),
  connectionsPerOrigin: z.int().positive().default(64).describe('Keep-alive connections per backend origin'),
  maxBodyBytes: z
    .int()
    .positive()
    .default(10 * MiB)
    .describe('Largest request body (a route may set its own maxBodyBytes): 413'),
  requestBufferBytes: z
    .int()
    .min(0)
    .default(64 * 1024)
    .describe(
      'Request bodies are read whole before the backend call; this much stays in memory, the rest goes to an unlinked temporary file',
    ),
  spillMaxBytes: z
    .int()
    .positive()
    .default(256 * MiB)
    .describe(
      'Bytes of request bodies held in temporary files at once, by this process (a body reserves its Content-Length when it starts to spill); past it: 503',
    ),
  spillMaxBytesPerClient: z
    .int()
    .positive()
    .default(32 * MiB)
    .describe('The same, for one client (its rate-limit key: address, or IPv6 network); past it: 429'),
  maxHeaderBytes: z
    .int()
    .min(1024)
    .default(16 * 1024)
    .describe('Largest request head (request line and headers): 431'),
});
