/**
 * What a reload cannot apply. Settings read when the listeners and the Redis connection were made
 * (`config.redis`, adding or removing `config.tls`, `config.http2`, the admin listener's address)
 * apply at the next start: a reload that changes them says so. How a close drains is ./drain.ts.
 */
import type { CompiledConfig } from '../config/types.js';
import type { Logger } from '../observability/logger.js';
import { adminReloadWarning } from '../admin/listener.js';

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
  if (running.tls !== (next.tls !== undefined))
    logger.warn('config.tls added or removed: it applies at the next start; the listener keeps its protocol');
  if (JSON.stringify(next.settings.http2) !== JSON.stringify(started.settings.http2))
    logger.warn('config.http2 changed: it applies at the next start; the listener keeps its protocols');
  const adminWarning = adminReloadWarning(started.settings.admin, next.settings.admin);
  if (adminWarning !== undefined) logger.warn(adminWarning);
}
