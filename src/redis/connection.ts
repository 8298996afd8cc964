/**
 * A connection to Redis (`config.redis`): the process's shared one, for the rate-limit store, the
 * mapping cache and the HTTP cache, and the quotas' own (layers/redis-quota.ts), whose commands
 * may wait longer (`quotas.redisCommandTimeoutMs`). Redis is an optimisation, never a dependency
 * of a request (docs/redis.md):
 * a command is bounded by `commandTimeoutMs`, a command sent while Redis is unreachable fails at
 * once instead of waiting in a queue, and the callers then decide locally.
 *
 * Transition table (one warning when an outage starts, one line when it ends):
 *   connecting --ready-------------------------------> up     info "Redis connected"
 *   connecting --first attempt failed----------------> down   warn, with the reason
 *   up         --command failed or connection lost---> down   warn, with the reason
 *   down       --reconnected, or a command answered--> up     info, with the outage's length
 * While down, or backing off after a failed command, `isUp` is false and nothing is sent; the
 * client reconnects by itself with an exponential backoff, and after a failed command on a live
 * connection the next command is tried once the backoff has passed.
 *
 * The client is ioredis: it answered an EVALSHA round trip with less CPU than node-redis in the
 * comparison recorded in docs/redis.md, and it reloads a script Redis forgot (NOSCRIPT) by itself.
 */
import { createRequire } from 'node:module';
import type { Redis as RedisClient, RedisOptions } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import { createEventBus, type EventBus, type RedisUse } from '../observability/events.js';
import { redactRedisUrl } from '../config/syntax/redis-url.js';
import { OUTAGE_WORDS, type OutageWords } from './outage-words.js';

/**
 * ioredis is loaded when the first connection is made, not with this module: a gateway without
 * `config.redis` never carries the client in memory (docs/redis.md).
 */
const requireModule = createRequire(import.meta.url);
export function redisClass(): typeof RedisClient {
  return (requireModule('ioredis') as typeof import('ioredis')).Redis;
}

/** `config.redis` with its defaults applied. */
export interface RedisSettings {
  readonly url: string;
  /** Put before every key, so several gateways (or other programs) can share one Redis. */
  readonly keyPrefix: string;
  readonly connectTimeoutMs: number;
  readonly commandTimeoutMs: number;
  /** `/ready` answers 503 while Redis is not connected. */
  readonly required: boolean;
}

export interface RedisConnection {
  readonly settings: RedisSettings;
  /** True while commands go to Redis: connected, and not backing off after a failed command. */
  readonly isUp: boolean;
  /** True while the connection is established (what `redis.required` makes `/ready` wait for). */
  readonly isConnected: boolean;
  /**
   * Registers a Lua script as a command (sent as EVALSHA; the client resends it when Redis forgot
   * it). `keys`: how many of its arguments are keys; undefined: the first argument says, per call.
   */
  defineScript(name: string, lua: string, keys: number | undefined): void;
  /**
   * Sends `command` (a Redis command or a script from defineScript). Resolves with the reply, or
   * undefined when it failed or timed out (counted on the bus); never rejects.
   */
  send(use: RedisUse, command: string, args: readonly RedisArg[]): Promise<unknown>;
  /** As `send`, with bulk replies as Buffers (for values that are bytes, not text). */
  sendBuffer(use: RedisUse, command: string, args: readonly RedisArg[]): Promise<unknown>;
  /**
   * Sets the longest wait for the answer of each command sent from now on (the quota connection's
   * own timeout): ioredis reads the option as it sends a command.
   */
  setCommandTimeout(ms: number): void;
  /**
   * Settles after the first connection attempt: undefined when connected (or when Redis was only
   * unreachable: the client keeps trying), else why these settings cannot work (wrong password,
   * unknown host), for `start` to refuse with.
   */
  readonly started: Promise<string | undefined>;
  close(): Promise<void>;
}

export interface RedisConnectionOptions {
  readonly settings: RedisSettings;
  readonly logger: Logger;
  readonly events: EventBus;
  /** What the connection serves, in its client name and log lines; default the shared connection. */
  readonly purpose?: 'shared' | 'quotas';
}

/** First and longest wait between two reconnection attempts, and after a failed command. */
const BACKOFF_FIRST_MS = 100;
const BACKOFF_MAX_MS = 2_000;

/** An argument of a command: text, a number, or bytes. */
export type RedisArg = string | number | Buffer;

type ScriptCommand = (...args: readonly RedisArg[]) => Promise<unknown>;

/** Opens the connection (in the background: `started` tells how the first attempt went). */
export function createRedisConnection(options: RedisConnectionOptions): RedisConnection {
  const { settings, logger, events } = options;
  const where = redactRedisUrl(settings.url);
  const Redis = redisClass();
  const purpose = options.purpose ?? 'shared';
  const client = new Redis(settings.url, clientOptions(settings, purpose));
  const scripts = new Map<string, ScriptCommand>();
  const bufferScripts = new Map<string, ScriptCommand>();
  const health = new ConnectionHealth(logger, where, purpose);

  client.on('ready', () => {
    health.lastError = '';
    health.goUp();
  });
  // The first attempt's failure is judged by `started` (a wrong password is not an outage).
  client.on('close', () => health.state !== 'connecting' && health.goDown(health.lastError || 'connection closed'));
  // Every failed attempt emits 'error'; the outage is logged once by goDown, so this only keeps
  // the reason (an 'error' without a listener would end the process).
  client.on('error', (err: Error) => (health.lastError = err.message));

  const started = client.connect().then(
    () => undefined,
    () => health.firstAttemptFailed(),
  );

  const commandFailed = (use: RedisUse, err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    events.emit('redis:error', { use, kind: errorKind(message, client.status) });
    health.commandFailed(message);
    return undefined;
  };

  return {
    settings,
    get isUp() {
      // Not `state`: past the backoff a command is the probe whose answer ends the outage.
      return client.status === 'ready' && (health.skipUntil === 0 || performance.now() >= health.skipUntil);
    },
    get isConnected() {
      return client.status === 'ready';
    },
    defineScript(name, lua, keys) {
      client.defineCommand(name, { lua, numberOfKeys: keys });
      const commands = client as unknown as Record<string, ScriptCommand>;
      scripts.set(name, commands[name]!.bind(client));
      // ioredis defines the variant that answers bulk strings as Buffers beside each script.
      bufferScripts.set(name, commands[`${name}Buffer`]!.bind(client));
    },
    setCommandTimeout(ms) {
      client.options.commandTimeout = ms;
    },
    send(use, command, args) {
      const script = scripts.get(command);
      return settle(use, script === undefined ? client.call(command, ...args) : script(...args));
    },
    sendBuffer(use, command, args) {
      const script = bufferScripts.get(command);
      return settle(use, script === undefined ? client.callBuffer(command, ...args) : script(...args));
    },
    started,
    async close() {
      health.state = 'closed';
      if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };

  /** A command's reply, timed and counted; a failure resolves with undefined. */
  function settle(use: RedisUse, reply: Promise<unknown>): Promise<unknown> {
    const startedAt = performance.now();
    return reply.then(
      (value) => {
        events.emit('redis:response', { use, durationMs: performance.now() - startedAt });
        if (health.state === 'down' && client.status === 'ready') health.goUp();
        return value;
      },
      (err: unknown) => commandFailed(use, err),
    );
  }
}

/** The client's settings: bounded waits, and no queue of commands while disconnected. */
function clientOptions(settings: RedisSettings, purpose: 'shared' | 'quotas'): RedisOptions {
  return {
    lazyConnect: true,
    keyPrefix: settings.keyPrefix,
    connectTimeout: settings.connectTimeoutMs,
    commandTimeout: settings.commandTimeoutMs,
    // A command sent while disconnected fails at once, and one in flight when the connection
    // drops is not resent: the request that needed it has decided locally in the meantime.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // RESP2: understood by every Redis and by managed services that lack HELLO.
    protocol: 2,
    connectionName: purpose === 'shared' ? 'portico' : 'portico-quotas',
    retryStrategy: reconnectDelay,
  };
}

/** The wait before reconnection attempt `times` (from 1): exponential, at most BACKOFF_MAX_MS. */
export function reconnectDelay(times: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.min(times - 1, 10));
}

/** Where the connection stands in the transition table above, and the backoff after a failed command. */
class ConnectionHealth {
  state: 'connecting' | 'up' | 'down' | 'closed' = 'connecting';
  /** The reason of the last failed connection attempt, logged when an outage starts. */
  lastError = '';
  /** No command is sent before this `performance.now()`; 0 while no command has failed since the last answer. */
  skipUntil = 0;
  private downSince = 0;
  private failedCommands = 0;
  private backoffMs = 0;

  private readonly words: OutageWords;

  constructor(
    private readonly logger: Logger,
    private readonly where: string,
    purpose: 'shared' | 'quotas',
  ) {
    this.words = OUTAGE_WORDS[purpose];
  }

  goDown(reason: string): void {
    if (this.state === 'closed' || this.state === 'down') return;
    const first = this.state === 'connecting';
    this.state = 'down';
    this.downSince = Date.now();
    this.failedCommands = 0;
    this.logger.warn({ redis: this.where, reason }, first ? this.words.unreachable : this.words.unavailable);
  }

  goUp(): void {
    this.backoffMs = 0;
    this.skipUntil = 0;
    if (this.state === 'up' || this.state === 'closed') return;
    if (this.state === 'connecting') this.logger.info({ redis: this.where }, this.words.connected);
    else
      this.logger.info(
        { redis: this.where, outageMs: Date.now() - this.downSince, failedCommands: this.failedCommands },
        this.words.available,
      );
    this.state = 'up';
  }

  /** A command failed: counted, the next one waits for the backoff, and the outage starts if it had not. */
  commandFailed(message: string): void {
    this.failedCommands++;
    this.backoffMs = Math.min(BACKOFF_MAX_MS, Math.max(BACKOFF_FIRST_MS, this.backoffMs * 2));
    this.skipUntil = performance.now() + this.backoffMs;
    this.goDown(message);
  }

  /** The first connection attempt failed: an outage, or (the reason returned) settings that cannot work. */
  firstAttemptFailed(): string | undefined {
    const problem = startProblem(this.lastError);
    if (problem === undefined) {
      this.goDown(this.lastError || 'connection closed');
      return undefined;
    }
    // Logged as well for an embedded gateway; `start` refuses with the same words on stderr.
    this.logger.error(
      { redis: this.where, problem },
      'Redis settings do not work: nothing is shared until they are fixed',
    );
    if (this.state === 'connecting') {
      this.state = 'down';
      this.downSince = Date.now();
    }
    return `Redis at ${this.where}: ${problem}`;
  }
}

/** Why `config.redis` cannot work (wrong password, unknown host), from one connection attempt; undefined without it. */
export async function redisStartProblem(
  config: { readonly settings: { readonly redis?: RedisSettings | undefined } },
  logger: Logger,
): Promise<string | undefined> {
  const settings = config.settings.redis;
  if (settings === undefined) return undefined;
  const probe = createRedisConnection({ settings, logger, events: createEventBus() });
  const problem = await probe.started;
  await probe.close();
  return problem;
}

/** The reason a failed first attempt means the settings are wrong, not that Redis is down. */
function startProblem(message: string): string | undefined {
  if (/WRONGPASS|NOAUTH|invalid password|invalid username/i.test(message))
    return `authentication failed (${message.trim()}); check the user and password in config.redis.url`;
  if (/ENOTFOUND/.test(message)) return `host not found (${message.trim()}); check config.redis.url`;
  return undefined;
}

/** The `kind` label of a failed command. */
function errorKind(message: string, status: string): string {
  if (/timed out/i.test(message)) return 'timeout';
  if (status !== 'ready' || /closed|writeable|connect/i.test(message)) return 'connection';
  return 'reply';
}
