/**
 * The `config.quotas` section and a route's `quota`: request counts over calendar windows (UTC)
 * per consumer, with limits per plan (docs/consumers.md#quotas).
 */
import { z } from 'zod';
import { limitKey } from './limit-key.js';

const count = (window: string) =>
  z.int().positive().optional().describe(`Requests admitted per calendar ${window} (UTC); default none`);

/** The windows a quota may limit, shortest first. */
export const QUOTA_WINDOWS = ['minute', 'hour', 'day', 'month'] as const;
export type QuotaWindow = (typeof QUOTA_WINDOWS)[number];

const WindowsShape = {
  minute: count('minute'),
  hour: count('hour'),
  day: count('day'),
  month: count('month'),
};

export const QuotaLimitsSchema = z.strictObject(WindowsShape);

const plans = z
  .record(z.string().min(1), QuotaLimitsSchema)
  .describe(
    "Limits per plan (a consumer's `plan`): a consumer whose plan is listed gets these windows instead of the ones above",
  );

const quotaKey = limitKey(
  'What a quota counts by: consumer (a request without one is counted by its client address), claims.NAME, header:NAME or ip',
);

/** `quotas.redisCommandTimeoutMs` when unset, and for routes' own quotas without `config.quotas`. */
export const QUOTA_REDIS_TIMEOUT_MS = 1000;

export const QuotasSchema = z.strictObject({
  key: quotaKey.default('consumer'),
  ...WindowsShape,
  plans: plans.default({}),
  store: z
    .enum(['local', 'redis'])
    .optional()
    .describe(
      'local: each process counts on its own; redis: the counters live in config.redis, shared by every replica; default redis when config.redis is set, else local',
    ),
  redisCommandTimeoutMs: z
    .int()
    .positive()
    .max(60_000)
    .default(QUOTA_REDIS_TIMEOUT_MS)
    .describe(
      "Longest wait for Redis's answer to a quota decision, on the quotas' own connection (redis.commandTimeoutMs is the rate limits' and the mapping cache's); past it the request is decided by the process's own counters",
    ),
});

export const RouteQuotaSchema = z.strictObject({
  enabled: z.boolean().default(true).describe('false exempts this route from config.quotas'),
  key: quotaKey.optional().describe("What this route's quota counts by; default config.quotas.key"),
  ...WindowsShape,
  plans: plans.optional(),
});

export type QuotasConfig = z.output<typeof QuotasSchema>;
export type QuotaLimits = z.output<typeof QuotaLimitsSchema>;
export type RouteQuotaConfig = z.output<typeof RouteQuotaSchema>;
