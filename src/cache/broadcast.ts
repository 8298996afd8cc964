/**
 * Purges and invalidations reach every replica's memory (`config.cache.redis.broadcast`,
 * docs/caching.md "Every replica's memory"). The shared level in Redis is one for all replicas,
 * but each keeps its own memory level: a replica that drops an answer publishes one small message
 * on `<keyPrefix>hc:broadcast` (cache/broadcast-message.ts), and every other replica, subscribed
 * on a connection of its own (redis/subscriber.ts), drops the same answers from its memory.
 *
 * - A message names at most four targets; an exact URL with its host is one map deletion, other
 *   targets (a prefix, a route, a URL on every host) need a pass over the memory level, so they
 *   are gathered and applied together in one pass per turn of the event loop; past MAX_PENDING of
 *   them the whole memory level goes instead (cheaper than the passes, and drops no less).
 * - A replica ignores its own messages (the `from` instance id): it has dropped the answers already.
 * - Pub/sub keeps nothing for a subscriber that was away: when the subscription comes back after
 *   an outage, the replica cannot know what it missed, so it drops its whole memory level (counted
 *   as a reset); the shared level in Redis is the same for every replica and needs nothing.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../observability/logger.js';
import type { RedisConnection } from '../redis/connection.js';
import { createRedisSubscriber, type RedisSubscriber } from '../redis/subscriber.js';
import {
  boundedTarget,
  decodeMessage,
  encodeMessage,
  invalidationTargets,
  type BroadcastCause,
} from './broadcast-message.js';
import { matches, type PurgeTarget } from './purge.js';
import type { CacheStore } from './store.js';

/** Targets that need a pass over the memory level, gathered before the whole level goes instead. */
export const MAX_PENDING = 64;

export type ResetReason = 'resubscribed' | 'backlog';

/** Counts since the start, for metrics. */
export interface BroadcastStats {
  readonly subscribed: boolean;
  /** Messages Redis accepted from this replica. */
  readonly sent: Readonly<Record<BroadcastCause, number>>;
  /** Messages of other replicas applied to this replica's memory. */
  readonly received: Readonly<Record<BroadcastCause, number>>;
  /** Messages ignored: too large, or not a message of this format. */
  readonly malformed: number;
  /** Times the whole memory level was dropped. */
  readonly resets: Readonly<Record<ResetReason, number>>;
}

export interface CacheBroadcast {
  /** Tells the other replicas that this one purged `target` (in the background). */
  purged(target: PurgeTarget): void;
  /** Tells the other replicas that this one dropped the answers of `primaries` (RFC 9111 4.4; in the background). */
  invalidated(primaries: readonly string[]): void;
  stats(): BroadcastStats;
  close(): Promise<void>;
}

export interface CacheBroadcastOptions {
  /** The shared connection, which publishes. */
  readonly redis: RedisConnection;
  /** This process's memory level. */
  readonly store: CacheStore;
  readonly logger: Logger;
}

/**
 * What applies the targets of other replicas' messages to `store`: an exact URL at once, the
 * others gathered into one pass per turn of the event loop; `backlog` is called instead of that
 * pass when more than MAX_PENDING targets came in one turn (it drops the whole level).
 */
export function memoryDropper(store: CacheStore, backlog: () => void): (target: PurgeTarget) => void {
  let pending: PurgeTarget[] = [];
  let dropAll = false;
  const flush = () => {
    const targets = pending;
    pending = [];
    if (dropAll) {
      dropAll = false;
      backlog();
    } else store.purge((primary, routeId) => targets.some((t) => matches(t, primary, routeId)));
  };
  return (target) => {
    if (target.kind === 'url' && target.host !== undefined) {
      store.delete(`${target.host}\u0000${target.path}`);
      return;
    }
    if (dropAll) return;
    if (pending.length === MAX_PENDING) {
      dropAll = true;
      return;
    }
    if (pending.push(target) === 1) setImmediate(flush);
  };
}

/** The channel of the cache's messages, under the connection's key prefix. */
export function broadcastChannel(keyPrefix: string): string {
  return `${keyPrefix}hc:broadcast`;
}

/** Subscribes (in the background) and returns the publishing side. */
export function createCacheBroadcast(options: CacheBroadcastOptions): CacheBroadcast {
  const { redis, store, logger } = options;
  const from = randomUUID();
  const channel = broadcastChannel(redis.settings.keyPrefix);
  const counts = {
    sent: { purge: 0, invalidation: 0 },
    received: { purge: 0, invalidation: 0 },
    malformed: 0,
    resets: { resubscribed: 0, backlog: 0 },
  };
  const reset = (reason: ResetReason) => {
    const dropped = store.clear();
    counts.resets[reason]++;
    logger.info({ reason, dropped }, 'HTTP cache: the memory level was dropped, as purges may have been missed');
  };
  const apply = memoryDropper(store, () => reset('backlog'));

  const subscriber: RedisSubscriber = createRedisSubscriber({
    settings: redis.settings,
    logger,
    channel,
    name: 'portico-cache-broadcast',
    lostMeans:
      "Redis subscription of the HTTP cache lost: other replicas' purges do not reach this process's memory until it is back, and then the memory level is dropped",
    onMessage(raw) {
      const message = decodeMessage(raw);
      if (message === undefined) {
        counts.malformed++;
        return;
      }
      if (message.from === from) return;
      counts.received[message.cause]++;
      for (const target of message.targets) apply(target);
    },
    onSubscribed(again) {
      // The first subscription is made at start, before anything could be missed, unless Redis was not there.
      if (again) reset('resubscribed');
    },
  });

  const publish = (cause: BroadcastCause, targets: readonly PurgeTarget[]) => {
    if (!redis.isUp) return;
    void redis.send('http-cache', 'publish', [channel, encodeMessage(from, cause, targets)]).then((reply) => {
      if (typeof reply === 'number') counts.sent[cause]++;
    });
  };

  return {
    purged: (target) => publish('purge', [boundedTarget(target)]),
    invalidated: (primaries) => publish('invalidation', invalidationTargets(primaries)),
    stats: () => ({ ...counts, subscribed: subscriber.isSubscribed }),
    close: () => subscriber.close(),
  };
}
