import { pino, type Logger, type DestinationStream } from 'pino';
import type { EventBus } from './events.js';

export type { Logger };

/**
 * JSON logs, one object a line (DECISIONS.md). Writes go through an asynchronous destination so a
 * slow stdout never stalls the event loop; `flushLogger` drains it before exit.
 */
export function createLogger(options: { level?: string; destination?: DestinationStream } = {}): Logger {
  const destination = options.destination ?? pino.destination({ dest: 1, sync: false });
  return pino({ level: options.level ?? process.env.PORTICO_LOG_LEVEL ?? 'info', base: { service: 'portico' } }, destination);
}

export function flushLogger(logger: Logger): void {
  try {
    logger.flush();
  } catch {
    // Destination already closed: nothing left to flush.
  }
}

/** Subscribes the logger to the gateway's events. */
export function logEvents(bus: EventBus, logger: Logger): void {
  bus.on('request:end', (e) => {
    const level = e.status >= 500 ? 'warn' : 'info';
    logger[level]({ reqId: e.requestId, method: e.method, route: e.routeId, path: e.path, status: e.status, durationMs: e.durationMs, aborted: e.aborted || undefined, error: e.errorCode }, 'request');
  });
  bus.on('upstream:error', (e) => logger.warn({ reqId: e.requestId, route: e.routeId, origin: e.origin, kind: e.kind, err: e.error }, 'upstream error'));
  bus.on('circuit:change', (e) => logger.warn(e, 'circuit state change'));
  bus.on('mapping:fail', (e) => logger.warn({ reqId: e.requestId, route: e.routeId, tag: e.tag, url: e.url, reason: e.reason }, 'mapping failed'));
  bus.on('auth:result', (e) => {
    if (e.outcome !== 'ok') logger.info({ reqId: e.requestId, route: e.routeId, outcome: e.outcome, detail: e.detail }, 'auth refused');
  });
  bus.on('config:reload', (e) => (e.ok ? logger.info({ file: e.file }, 'configuration reloaded') : logger.error({ file: e.file, problems: e.problems }, 'configuration reload rejected; keeping the running configuration')));
}
