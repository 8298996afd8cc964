import { pino, type Logger, type DestinationStream } from 'pino';
import type { EventBus, GatewayEvents } from './events.js';
import { limitRepeats } from './repeat-limit.js';
import { stdoutBatch } from './log-output.js';
import { accessLogWriter } from './access-log.js';

export type { Logger };

/**
 * JSON logs, one object a line (docs/design-decisions.md). Writes are batched: one write system call per
 * 64 KiB of lines, or per 100 ms when fewer come, never one per request, and they never block the
 * event loop (observability/line-batch.ts, log-output.ts). When stdout cannot keep up, lines are dropped
 * rather than queued without bound: counted (log-output.ts `droppedLogLines`, the metric
 * `portico_log_lines_dropped_total`) and reported by a warning at most every 10 s. Shutdown
 * flushes what is left before exit (ops/shutdown.ts `flushThen`).
 */
export function createLogger(options: { level?: string; destination?: DestinationStream } = {}): Logger {
  const level = options.level ?? (process.env.PORTICO_LOG_LEVEL || 'info');
  const problem = logLevelProblem(level);
  if (problem !== undefined) throw new Error(options.level === undefined ? `$PORTICO_LOG_LEVEL: ${problem}` : problem);
  const batch = options.destination === undefined ? stdoutBatch() : undefined;
  const logger = pino({ level, base: { service: 'portico' } }, options.destination ?? batch!);
  batch?.reportDrops((lines, total) =>
    logger.warn({ droppedLines: lines, droppedTotal: total }, 'log output cannot keep up: lines dropped'),
  );
  return logger;
}

/** The levels `PORTICO_LOG_LEVEL` accepts, most to least verbose, then `silent`. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/**
 * Why `text` is not a log level, or undefined when it is one (or empty: the default applies).
 * @example logLevelProblem('verbose') // '"verbose" is not a log level (expected one of trace, debug, ...)'
 */
export function logLevelProblem(text: string | undefined): string | undefined {
  if (text === undefined || text === '' || (LOG_LEVELS as readonly string[]).includes(text)) return undefined;
  const lower = text.toLowerCase();
  const hint = (LOG_LEVELS as readonly string[]).includes(lower) ? `; levels are lower case: ${lower}` : '';
  return `"${text}" is not a log level (expected one of ${LOG_LEVELS.join(', ')}${hint})`;
}

/**
 * Subscribes the logger to the gateway's events. `repeatWindowMs` overrides the window in which
 * identical warnings are counted instead of written (observability/repeat-limit.ts; tests).
 */
export function logEvents(bus: EventBus, logger: Logger, options: { repeatWindowMs?: number } = {}): void {
  bus.on('request:end', accessLogWriter(logger));
  // An outage makes every request fail alike: identical warnings (same route, origin or tag, and
  // kind or reason) are written once per window with the count of those held back.
  const upstreamError = limitRepeats<GatewayEvents['upstream:error']>({
    windowMs: options.repeatWindowMs,
    write: (e, repeats) =>
      logger.warn(
        {
          reqId: e.requestId,
          route: e.routeId,
          origin: e.origin,
          kind: e.kind,
          err: e.error,
          ...(repeats && { repeated: repeats.lines }),
        },
        'upstream error',
      ),
  });
  bus.on('upstream:error', (e) => upstreamError(`${e.routeId} ${e.origin} ${e.kind}`, e));
  // A departure is routine (a tab closed, an EventSource reconnecting): debug, without a stack.
  bus.on('client:closed', (e) =>
    logger.debug({ reqId: e.requestId, route: e.routeId, origin: e.origin }, 'client closed'),
  );
  bus.on('circuit:change', (e) => logger.warn(e, 'circuit state change'));
  const mappingFail = limitRepeats<GatewayEvents['mapping:fail']>({
    windowMs: options.repeatWindowMs,
    items: (e) => e.items,
    write: (e, repeats) =>
      logger.warn(
        {
          reqId: e.requestId,
          route: e.routeId,
          tag: e.tag,
          url: e.url,
          reason: e.reason,
          items: e.items,
          calls: e.calls,
          reasons: e.reasons,
          ...(repeats && { repeated: repeats.lines, repeatedItems: repeats.items }),
        },
        'mapping failed',
      ),
  });
  bus.on('mapping:fail', (e) =>
    mappingFail(
      `${e.routeId} ${e.tag} ${e.reasons === undefined ? e.reason : Object.keys(e.reasons).sort().join('|')}`,
      e,
    ),
  );
  const aggregateIncomplete = limitRepeats<GatewayEvents['aggregate:incomplete']>({
    windowMs: options.repeatWindowMs,
    write: (e, repeats) =>
      logger.warn(
        {
          reqId: e.requestId,
          route: e.routeId,
          failed: e.failed,
          total: e.total,
          ...(repeats && { repeated: repeats.lines }),
        },
        e.failed.length === e.total ? 'aggregation failed: no backend answered' : 'aggregation incomplete',
      ),
  });
  bus.on('aggregate:incomplete', (e) =>
    aggregateIncomplete(`${e.routeId} ${e.failed.map((f) => `${f.backend}:${f.reason}`).join('|')}`, e),
  );
  bus.on('upstream:retry', (e) =>
    logger.debug(
      { reqId: e.requestId, route: e.routeId, upstream: e.origin, target: e.target, reason: e.reason },
      'retried on another target',
    ),
  );
  const targetMessages = {
    ejected: 'upstream target ejected',
    restored: 'upstream target back in service',
    unhealthy: 'upstream target unhealthy',
    healthy: 'upstream target healthy',
  } as const;
  bus.on('upstream:target', (e) => {
    const line = { upstream: e.upstream, target: e.target, ejectedForMs: e.ejectedForMs };
    if (e.state === 'ejected' || e.state === 'unhealthy') logger.warn(line, targetMessages[e.state]);
    else logger.info(line, targetMessages[e.state]);
  });
  bus.on('auth:result', (e) => {
    if (e.outcome !== 'ok')
      logger.info({ reqId: e.requestId, route: e.routeId, outcome: e.outcome, detail: e.detail }, 'auth refused');
  });
  bus.on('config:reload', (e) =>
    e.ok
      ? logger.info({ file: e.file }, 'configuration reloaded')
      : logger.error(
          { file: e.file, problems: e.problems },
          'configuration reload rejected; keeping the running configuration',
        ),
  );
}
