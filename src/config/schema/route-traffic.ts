/**
 * How a route's traffic is shared out beyond its one backend: a weighted split between services
 * or named upstreams (canary releases), and a mirror that gets a copy of a sample of the requests
 * (docs/routing.md "Traffic splits" and "Mirroring").
 */
import { z } from 'zod';

/** One arm of a split: a service or a named upstream, and its share. */
export const SplitArmSchema = z
  .strictObject({
    service: z
      .string()
      .min(1)
      .optional()
      .describe("Backend of this arm: host:port, http://host:port, https://host, or a named upstream's name"),
    upstream: z.string().min(1).optional().describe('A named upstream (upstreams:) this arm calls'),
    weight: z
      .int()
      .min(0)
      .max(1_000_000)
      .describe("This arm's share of the route's requests, relative to the other arms' weights; 0 sends it none"),
  })
  .describe('One arm of a traffic split: service or upstream, and a weight');

export const SplitSchema = z
  .array(SplitArmSchema)
  .min(2)
  .max(16)
  .describe(
    "Divide the route's requests between services or named upstreams by weight (instead of service); each arm has its own pool, circuit and retries",
  );

export const StickyBySchema = z
  .string()
  .min(1)
  .describe(
    'Keep each client on one arm of the split: header:NAME, cookie:NAME or claims.NAME; a request without it is placed by weight alone',
  );

export const MirrorSchema = z
  .strictObject({
    service: z
      .string()
      .min(1)
      .describe(
        'Where copies go: host:port, http://host:port or https://host (not a named upstream). Its answers are discarded',
      ),
    percent: z.number().min(0).max(100).default(100).describe("Share of the route's requests copied, spread evenly"),
    maxBodyBytes: z
      .int()
      .min(0)
      .default(64 * 1024)
      .describe('Largest request body copied; a request with a larger body is not mirrored (counted as dropped)'),
    maxInFlight: z
      .int()
      .min(1)
      .max(10_000)
      .default(64)
      .describe('Most copies of this route waiting for the mirror at once; past it a copy is dropped (counted)'),
    timeoutSec: z
      .number()
      .positive()
      .max(300)
      .default(5)
      .describe('A copy still unanswered (head and body) after this time is abandoned (counted as failed)'),
  })
  .describe("Send a copy of a sample of the route's requests to another service; never changes the client's answer");
