/**
 * The gateway's own logger (JSON lines, debug level) writing into memory, for tests that assert
 * what was logged: each line is parsed as it is written.
 */
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/observability/logger.js';

/** One log line, parsed. */
export type LogLine = Record<string, unknown>;

/**
 * A debug-level logger and every line it wrote so far; `onLine` sees each line as it arrives.
 * @example const { logger, lines } = captureLogger();
 */
export function captureLogger(onLine?: (line: LogLine) => void): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const text of chunk.toString('utf8').split('\n')) {
        if (!text) continue;
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        onLine?.(line);
      }
      cb();
    },
  });
  return { logger: createLogger({ level: 'debug', destination }), lines };
}
