/**
 * The HTTP cache's shared second level (`config.cache.redis`, docs/caching.md "Shared by
 * replicas"): stored answers kept in `config.redis` too, so a replica serves what another one
 * fetched without calling the backend.
 *
 * One Redis hash per primary key (host and target URI), `<keyPrefix>hc:<primary>`, holding the
 * `Vary` names of its answers (`vary`), the route that stored them last (`route`, for a purge by
 * route) and one field per variant: `e:` and a SHA-256 of its secondary key, which may hold a
 * claim or a header that `keyBy` or `Vary` names (an Authorization header, say) and that is not
 * to be written out as it is; its value is the entry's head as JSON and its body as bytes
 * (entry-codec.ts). The hash expires when its longest-lived variant may no longer be served;
 * each variant carries its own end, checked on read.
 *
 * Redis is an optimisation, never a dependency of a request (docs/redis.md): while it is down a
 * lookup answers "absent" at once, a slow one gives up after `redis.commandTimeoutMs`, both
 * counted as fallbacks (`use="http-cache"`); writes are sent in the background and never waited for.
 */
import { createHash } from 'node:crypto';
import { fallbackCounter, type RedisUserOptions } from '../redis/fallback-counter.js';
import { decodeEntry, encodeEntry } from './entry-codec.js';
import type { CacheEntry } from './store.js';

/**
 * KEYS[1] the hash; ARGV[1] the Vary names the caller guessed, ARGV[2] the variant's field for
 * them. Returns nil when nothing is stored, { vary } when the guess was wrong (the caller asks
 * again with the right field), else { vary, entry or false }: one round trip in the usual case.
 */
const GET_LUA = `
local vary = redis.call('HGET', KEYS[1], 'vary')
if not vary then return nil end
if vary ~= ARGV[1] then return { vary } end
return { vary, redis.call('HGET', KEYS[1], ARGV[2]) }
`;

/**
 * KEYS[1] the hash; ARGV: vary, field, entry, milliseconds to keep it, route. An answer with
 * other Vary names replaces the variants of the old ones (as the memory level does). The hash
 * lives as long as its longest-lived variant.
 */
const SET_LUA = `
if redis.call('HGET', KEYS[1], 'vary') ~= ARGV[1] then redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[1], 'vary', ARGV[1], ARGV[2], ARGV[3], 'route', ARGV[5])
local ttl = tonumber(ARGV[4])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
`;

/**
 * KEYS: hashes; ARGV[1] a route id, or '' for every hash. Deletes those of the route (or all) and
 * returns how many variants they held.
 */
const PURGE_LUA = `
local n = 0
for _, key in ipairs(KEYS) do
  if ARGV[1] == '' or redis.call('HGET', key, 'route') == ARGV[1] then
    local fields = redis.call('HLEN', key)
    if fields > 0 and redis.call('DEL', key) == 1 then n = n + math.max(0, fields - 2) end
  end
end
return n
`;

const GET = 'porticoHttpCacheGet';
const SET = 'porticoHttpCacheSet';
const PURGE = 'porticoHttpCachePurge';
const KEY_PREFIX = 'hc:';
const FIELD_PREFIX = 'e:';
/** Keys asked for per SCAN step of a purge, and purged per script call. */
const SCAN_COUNT = 500;

/** An entry found in Redis, with the Vary names it was stored under and its variant's key. */
export interface SharedFind {
  readonly vary: readonly string[];
  readonly secondary: string;
  readonly entry: CacheEntry;
}

/** What a purge of the shared level drops: one URL, or every URL under a path prefix, optionally of one route. */
export interface SharedPurge {
  /** Host (lower case) or undefined for every host. */
  readonly host: string | undefined;
  /** The path and query, exactly (`url`) or as a prefix (`prefix`); undefined: every URL. */
  readonly path: string | undefined;
  readonly exact: boolean;
  readonly routeId: string | undefined;
}

export interface SharedCacheStore {
  /**
   * The variant of `primary` for a request: `secondaryFor(vary)` is its variant key under a Vary
   * list, `guess` the list most likely stored. Undefined when absent, expired, or Redis is down or slow.
   */
  find(
    primary: string,
    guess: readonly string[],
    secondaryFor: (vary: readonly string[]) => string,
  ): Promise<SharedFind | undefined>;
  /** Writes a variant for `ttlMs` (in the background). */
  write(
    primary: string,
    vary: readonly string[],
    secondary: string,
    entry: CacheEntry,
    ttlMs: number,
    routeId: string,
  ): void;
  /** Forgets every variant of `primary` (in the background). */
  delete(primary: string): void;
  /** Drops what `what` names; the number of stored answers dropped, undefined when Redis did not answer. */
  purge(what: SharedPurge): Promise<number | undefined>;
}

/** The shared level on the process's Redis connection. */
export function createRedisCacheStore(options: RedisUserOptions): SharedCacheStore {
  const { redis } = options;
  redis.defineScript(GET, GET_LUA, 1);
  redis.defineScript(SET, SET_LUA, 1);
  redis.defineScript(PURGE, PURGE_LUA, undefined);
  const countFallback = fallbackCounter(options.events, 'http-cache');
  const skipped = () => {
    countFallback();
    return undefined;
  };
  const ask = async (key: string, vary: string, field: string) => {
    if (!redis.isUp) return skipped();
    const reply = await redis.sendBuffer('http-cache', GET, [key, vary, field]);
    return reply === undefined ? skipped() : reply;
  };

  return {
    async find(primary, guess, secondaryFor) {
      const key = KEY_PREFIX + primary;
      let vary = guess.join(',');
      let reply = await ask(key, vary, fieldOf(secondaryFor(guess)));
      if (!Array.isArray(reply) || !Buffer.isBuffer(reply[0])) return undefined;
      if (reply.length === 1) {
        // Another Vary list is stored: ask once more, for the variant under that one.
        vary = reply[0].toString('latin1');
        reply = await ask(key, vary, fieldOf(secondaryFor(namesOf(vary))));
        if (!Array.isArray(reply) || reply.length < 2) return undefined;
      }
      const names = namesOf(vary);
      const value: unknown = reply[1];
      const entry = Buffer.isBuffer(value) ? decodeEntry(value, Date.now()) : undefined;
      return entry === undefined ? undefined : { vary: names, secondary: secondaryFor(names), entry };
    },
    write(primary, vary, secondary, entry, ttlMs, routeId) {
      if (!redis.isUp) return;
      const ms = Math.max(1, Math.round(ttlMs));
      const value = encodeEntry(entry, Date.now() + ms);
      void redis.send('http-cache', SET, [
        KEY_PREFIX + primary,
        vary.join(','),
        fieldOf(secondary),
        value,
        ms,
        routeId,
      ]);
    },
    delete(primary) {
      if (!redis.isUp) return;
      void redis.send('http-cache', 'del', [KEY_PREFIX + primary]);
    },
    purge: (what) => purgeShared(options, what),
  };
}

/** A variant's field in its URL's hash. */
function fieldOf(secondary: string): string {
  return FIELD_PREFIX + createHash('sha256').update(secondary).digest('base64url');
}

function namesOf(vary: string): string[] {
  return vary === '' ? [] : vary.split(',');
}

/** A purge: the one key of a URL with its host, else a SCAN over the keys that match. */
async function purgeShared(options: RedisUserOptions, what: SharedPurge): Promise<number | undefined> {
  const { redis } = options;
  if (!redis.isUp) return undefined;
  const route = what.routeId ?? '';
  if (what.exact && what.host !== undefined && what.path !== undefined) {
    const n = await redis.send('http-cache', PURGE, [1, `${KEY_PREFIX}${what.host}\u0000${what.path}`, route]);
    return typeof n === 'number' ? n : undefined;
  }
  // SCAN's pattern and the keys it returns carry the connection's keyPrefix; the script's keys get it added.
  const { keyPrefix } = redis.settings;
  const pattern =
    keyPrefix +
    KEY_PREFIX +
    (what.host === undefined ? '*' : globEscape(what.host)) +
    '\u0000' +
    (what.path === undefined ? '*' : globEscape(what.path) + (what.exact ? '' : '*'));
  let cursor = '0';
  let total = 0;
  do {
    const reply = await redis.send('http-cache', 'scan', [cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT]);
    if (!Array.isArray(reply) || typeof reply[0] !== 'string' || !Array.isArray(reply[1])) return undefined;
    cursor = reply[0];
    const keys = (reply[1] as unknown[]).filter((k): k is string => typeof k === 'string');
    if (keys.length === 0) continue;
    const n = await redis.send('http-cache', PURGE, [
      keys.length,
      ...keys.map((k) => k.slice(keyPrefix.length)),
      route,
    ]);
    if (typeof n !== 'number') return undefined;
    total += n;
  } while (cursor !== '0');
  return total;
}

/** `text` matched literally in a Redis glob pattern. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
