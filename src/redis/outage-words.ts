/**
 * The log lines of each connection to Redis (redis/connection.ts), which say what its outage
 * means: the shared connection's for rate limits and the caches, the quotas' own for quotas.
 */
export interface OutageWords {
  readonly connected: string;
  readonly unreachable: string;
  readonly unavailable: string;
  readonly available: string;
}

export const OUTAGE_WORDS: Readonly<Record<'shared' | 'quotas', OutageWords>> = {
  shared: {
    connected: 'Redis connected',
    unreachable:
      "Redis unreachable at start: rate limits use each process's own buckets and the caches skip Redis until it answers",
    unavailable:
      "Redis unavailable: rate limits fall back to each process's own buckets and the caches skip Redis until it answers",
    available: 'Redis available again: rate limits and the caches are shared again',
  },
  quotas: {
    connected: 'Redis connected for quotas',
    unreachable: 'Redis unreachable at start for quotas: each process counts quotas on its own until it answers',
    unavailable: 'Redis unavailable for quotas: each process counts quotas on its own until it answers',
    available: 'Redis available again for quotas: quotas are shared again',
  },
};
