/**
 * What the users of the shared connection (the Redis rate-limit store, the shared levels of the
 * mapping cache and the HTTP cache) have in common: the options they are built with, and the count of decisions made without Redis.
 */
import type { EventBus, RedisUse } from '../observability/events.js';
import type { RedisConnection } from './connection.js';

/** What a user of the shared connection is built with. */
export interface RedisUserOptions {
  readonly redis: RedisConnection;
  /** Where each decision made without Redis is counted ('redis:fallback'). */
  readonly events: EventBus;
}

/** A function that counts one decision of `use` made without Redis (down, backing off, or no answer). */
export function fallbackCounter(events: EventBus, use: RedisUse): () => void {
  // The event's payload is made once here: a fallback, which happens on a request, allocates nothing.
  const payload = Object.freeze({ use });
  return () => events.emit('redis:fallback', payload);
}
