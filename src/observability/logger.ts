import { pino, type Logger, type DestinationStream } from 'pino';
import type { EventBus, GatewayEvents } from './events.js';
import { limitRepeats } from './repeat-limit.js';
import { LineBatch, type BatchOutput } from './line-batch.js';
import { accessLogWriter } from './access-log.js';

export type { Logger };

/**
 * JSON logs, one object a line (DECISIONS.md). Writes are asynchronous and batched: one write
 * system call per 64 KiB of log lines under load instead of one per request (the access log alone
 * cost about 20% of throughput unbatched, issue #8), and a line waits at most 200 ms when idle
 * (observability/line-batch.ts). Shutdown flushes what is left before exit (server/shutdown.ts
 * `flushThen`).
 */
export function createLogger(options: { level?: string; destination?: DestinationStream } = {}): Logger {
  const level = options.level ?? (process.env.PORTICO_LOG_LEVEL || 'info');
  const problem = logLevelProblem(level);
  if (problem !== undefined) throw new Error(options.level === undefined ? `$PORTICO_LOG_LEVEL: ${problem}` : problem);
  // maxLength bounds the buffer when stdout blocks: past 16 MiB lines are dropped, not queued.
  // sonic-boom's buffer mode takes Buffers; its type declares strings only.
  const destination = options.destination ?? new LineBatch(pino.destination({ dest: 1, sync: false, contentMode: 'buffer', maxLength: 16 * 1024 * 1024 }) as unknown as BatchOutput);
  return pino({ level, base: { service: 'portico' } }, destination);
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
    write: (e, repeats) => logger.warn({ reqId: e.requestId, route: e.routeId, origin: e.origin, kind: e.kind, err: e.error, ...(repeats && { repeated: repeats.lines }) }, 'upstream error'),
  });
  bus.on('upstream:error', (e) => upstreamError(`${e.routeId} ${e.origin} ${e.kind}`, e));
  // A departure is routine (a tab closed, an EventSource reconnecting): debug, without a stack.
  bus.on('client:closed', (e) => logger.debug({ reqId: e.requestId, route: e.routeId, origin: e.origin }, 'client closed'));
  bus.on('circuit:change', (e) => logger.warn(e, 'circuit state change'));
  const mappingFail = limitRepeats<GatewayEvents['mapping:fail']>({
    windowMs: options.repeatWindowMs,
    items: (e) => e.items,
    write: (e, repeats) =>
      logger.warn(
        { reqId: e.requestId, route: e.routeId, tag: e.tag, url: e.url, reason: e.reason, items: e.items, calls: e.calls, reasons: e.reasons, ...(repeats && { repeated: repeats.lines, repeatedItems: repeats.items }) },
        'mapping failed',
      ),
  });
  bus.on('mapping:fail', (e) => mappingFail(`${e.routeId} ${e.tag} ${e.reasons === undefined ? e.reason : Object.keys(e.reasons).sort().join('|')}`, e));
  bus.on('auth:result', (e) => {
    if (e.outcome !== 'ok') logger.info({ reqId: e.requestId, route: e.routeId, outcome: e.outcome, detail: e.detail }, 'auth refused');
  });
  bus.on('config:reload', (e) => (e.ok ? logger.info({ file: e.file }, 'configuration reloaded') : logger.error({ file: e.file, problems: e.problems }, 'configuration reload rejected; keeping the running configuration')));
}
