/**
 * A subscription to one Redis pub/sub channel, on a connection of its own: a connection in
 * subscribe mode can send no other command, so the shared one (./connection.ts) cannot carry it.
 * Used by the HTTP cache's broadcast of purges (cache/broadcast.ts).
 *
 * Pub/sub delivers a message only to the subscribers connected when it is published: a message
 * sent while this connection is down is lost for good. So the owner is told each time the
 * subscription is in place, and whether it had been lost (or never made) before, to decide what
 * it may have missed. Transitions (one log line each):
 *   connecting --subscribed--------------------------> subscribed   (again: false)
 *   connecting --first attempt failed----------------> lost         warn
 *   subscribed --connection lost---------------------> lost         warn
 *   lost       --reconnected and subscribed----------> subscribed   info (again: true)
 * The client reconnects by itself with the shared connection's backoff.
 */
import type { Redis as RedisClient, RedisOptions } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import { redactRedisUrl } from '../config/syntax/redis-url.js';
import { reconnectDelay, redisClass, type RedisSettings } from './connection.js';

export interface RedisSubscriber {
  /** True while the subscription is in place (messages arrive). */
  readonly isSubscribed: boolean;
  close(): Promise<void>;
}

export interface RedisSubscriberOptions {
  readonly settings: RedisSettings;
  readonly logger: Logger;
  /** The channel's whole name: ioredis does not put `keyPrefix` before channel names. */
  readonly channel: string;
  /** The client's name (CLIENT LIST), so an operator can tell the connection apart. */
  readonly name: string;
  /** What a lost subscription means, for the warning. */
  readonly lostMeans: string;
  onMessage(message: Buffer): void;
  /** The subscription is in place; `again`: it had been lost or had failed before, so messages may have been missed. */
  onSubscribed(again: boolean): void;
}

/** Connects and subscribes in the background. */
export function createRedisSubscriber(options: RedisSubscriberOptions): RedisSubscriber {
  const { settings, logger, channel } = options;
  const where = redactRedisUrl(settings.url);
  const Redis = redisClass();
  const client: RedisClient = new Redis(settings.url, subscriberOptions(settings, options.name));
  let state: 'connecting' | 'subscribed' | 'lost' | 'closed' = 'connecting';
  let lastError = '';
  let lostSince = 0;

  const lose = (reason: string) => {
    if (state === 'closed' || state === 'lost') return;
    state = 'lost';
    lostSince = Date.now();
    logger.warn({ redis: where, channel, reason }, options.lostMeans);
  };

  client.on('error', (err: Error) => (lastError = err.message));
  client.on('close', () => lose(lastError || 'connection closed'));
  client.on('messageBuffer', (_channel: Buffer, message: Buffer) => {
    if (state === 'subscribed') options.onMessage(message);
  });
  // Subscribed here on each connection rather than by ioredis's autoResubscribe, so the owner
  // learns when the subscription is in place again.
  client.on('ready', () => {
    client.subscribe(channel).then(
      () => {
        if (state === 'closed') return;
        const again = state === 'lost';
        if (again) logger.info({ redis: where, channel, outageMs: Date.now() - lostSince }, 'Redis subscription back');
        state = 'subscribed';
        options.onSubscribed(again);
      },
      (err: unknown) => {
        lastError = err instanceof Error ? err.message : String(err);
        // The connection stays up but carries nothing: drop it, and the next attempt subscribes again.
        client.disconnect(true);
      },
    );
  });
  client.connect().catch(() => lose(lastError || 'connection failed'));

  return {
    get isSubscribed() {
      return state === 'subscribed';
    },
    close() {
      state = 'closed';
      client.disconnect();
      return Promise.resolve();
    },
  };
}

function subscriberOptions(settings: RedisSettings, name: string): RedisOptions {
  return {
    lazyConnect: true,
    connectTimeout: settings.connectTimeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResubscribe: false,
    protocol: 2,
    connectionName: name,
    retryStrategy: reconnectDelay,
  };
}
