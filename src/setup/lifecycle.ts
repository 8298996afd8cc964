/**
 * What a reload cannot apply. Settings read when the listeners and the Redis connection were made
 * (`config.redis`, the cache's subscription (`cache.redis.broadcast`), adding or removing
 * `config.tls`, `config.http2`, the admin listener's address)
 * apply at the next start: a reload that changes them says so. How a close drains is ./drain.ts.
 */
import type { CompiledConfig } from '../config/types.js';
import type { Logger } from '../observability/logger.js';
import { adminReloadWarning } from '../admin/listener.js';
import { sharedCacheSettings } from '../config/schema.js';

/** Logs a warning for each setting of `next` that only a restart applies. */
export function warnStartOnlyChanges(
  started: CompiledConfig,
  next: CompiledConfig,
  running: { readonly redis: boolean; readonly tls: boolean },
  logger: Logger,
): void {
  if (JSON.stringify(next.settings.redis) !== JSON.stringify(started.settings.redis))
    logger.warn(
      { running: running.redis ? 'the one from start' : 'none' },
      'config.redis changed: it applies at the next start; the running connection stays',
    );
  if (broadcasts(next) && !broadcasts(started))
    logger.warn(
      'config.cache.redis.broadcast turned on: this process subscribes at the next start; until then it neither tells nor hears other replicas of purges',
    );
  if (running.tls !== (next.tls !== undefined))
    logger.warn('config.tls added or removed: it applies at the next start; the listener keeps its protocol');
  if (JSON.stringify(next.settings.http2) !== JSON.stringify(started.settings.http2))
    logger.warn('config.http2 changed: it applies at the next start; the listener keeps its protocols');
  const adminWarning = adminReloadWarning(started.settings.admin, next.settings.admin);
  if (adminWarning !== undefined) logger.warn(adminWarning);
}

/** Whether `config` has the HTTP cache's broadcast on (cache/broadcast.ts), which subscribes at start. */
function broadcasts(config: CompiledConfig): boolean {
  return config.settings.redis !== undefined && sharedCacheSettings(config.settings.cache)?.broadcast === true;
}
