import { pino, type Logger, type DestinationStream } from 'pino';
import { stdoutBatch } from './log-output.js';

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
