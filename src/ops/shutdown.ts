/**
 * Graceful shutdown (docs/design-decisions.md, docs/lifecycle.md "Stopping"): on SIGTERM or SIGINT
 * the gateway stops accepting, `/ready` answers 503, in-flight requests get up to 15 s to finish,
 * then the process exits 0. SIGTERM, what orchestrators and service managers send, first serves on
 * for `config.shutdown.drainDelaySec`; SIGINT, a terminal's Ctrl-C, never waits. A second signal
 * while draining exits at once with 1 (an operator pressing Ctrl-C twice means it).
 */
import type { Logger } from '../observability/logger.js';

export interface Closable {
  close(options?: { readonly drainDelayMs?: number }): Promise<void>;
}

export interface ShutdownOptions {
  readonly logger: Logger;
  /** Called with the exit code; process.exit by default. */
  readonly exit?: (code: number) => void;
  readonly signals?: readonly NodeJS.Signals[];
  /** Milliseconds to serve on before stopping, for the stop's reason; none by default. */
  readonly drainDelayMs?: (reason: string) => number;
}

/** The drain delay applies to a SIGTERM, from the process itself or through the primary. */
export const drainsWithDelay = (reason: string): boolean => reason === 'SIGTERM';

/**
 * Installs the signal handlers; returns a function that triggers the same shutdown (idempotent:
 * only a repeated signal forces the exit, e.g. a primary's request after the terminal's Ctrl-C).
 */
export function installShutdown(target: Closable, options: ShutdownOptions): (reason: string) => void {
  const { logger } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const stop = (reason: string, fromSignal = false) => {
    if (stopping && !fromSignal) return;
    if (stopping) {
      logger.warn({ reason }, 'second stop request while draining: exiting now');
      flushThen(logger, () => exit(1));
      return;
    }
    stopping = true;
    const drainDelayMs = options.drainDelayMs?.(reason) ?? 0;
    logger.info({ signal: reason, drainDelayMs }, 'draining: finishing in-flight requests');
    target.close({ drainDelayMs }).then(
      () => {
        logger.info('stopped');
        flushThen(logger, () => exit(0));
      },
      (err: unknown) => {
        logger.error({ err }, 'error while stopping');
        flushThen(logger, () => exit(1));
      },
    );
  };
  for (const signal of options.signals ?? (['SIGTERM', 'SIGINT'] as const))
    process.on(signal, () => stop(signal, true));
  return (reason) => stop(reason);
}

/** Runs `then` once the logger's asynchronous destination has written everything (bounded). */
export function flushThen(logger: Logger, then: () => void): void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    then();
  };
  setTimeout(once, 1_000).unref();
  try {
    logger.flush(() => once());
  } catch {
    once();
  }
}
