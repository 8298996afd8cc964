/**
 * The consumers file reloads on its own (docs/consumers.md "Reloading the consumers file"): while
 * the gateway runs, `config.consumersFile` is watched, and a change refills the key store of the
 * configuration being served, without rebuilding routes. A file with problems changes nothing:
 * the running keys stay, and the problems are logged with their FILE:LINE:COL. A SIGHUP (or a
 * change of the configuration under `--watch`) reloads the whole configuration, which reads the
 * consumers file again too.
 */
import { compileConsumers, readConsumersFile } from '../config/consumers-file.js';
import { formatProblem } from '../config/problems.js';
import type { Logger } from '../observability/logger.js';
import type { KeyStore } from '../auth/key-store.js';
import { watchConfigFile } from '../ops/reload.js';

/** Reads `file` and, when it is valid, serves its consumers from `store`; true when it did. */
export function reloadConsumers(file: string, store: KeyStore | undefined, logger: Logger): boolean {
  const started = performance.now();
  const read = readConsumersFile(file);
  if (!read.ok) {
    logger.error(
      { file, problems: read.problems.map(formatProblem) },
      'consumers file rejected; keeping the running keys',
    );
    return false;
  }
  const consumers = compileConsumers(read.consumers);
  store?.replace(consumers);
  logger.info({ file, consumers: consumers.length, ms: Math.round(performance.now() - started) }, 'consumers reloaded');
  return true;
}

export interface ConsumersWatch {
  /** Watches `file` (the served configuration's), once per file: the same file keeps its watcher. */
  follow(file: string | undefined): void;
  close(): void;
}

/**
 * The watcher of the consumers file of the configuration being served; `store()` is that
 * configuration's key store at the moment of a change.
 */
export function createConsumersWatch(store: () => KeyStore | undefined, logger: Logger): ConsumersWatch {
  let watched: string | undefined;
  let stop: (() => void) | undefined;
  return {
    follow(file) {
      if (file === watched) return;
      stop?.();
      watched = file;
      stop = file === undefined ? undefined : watchConfigFile(file, () => reloadConsumers(file, store(), logger));
    },
    close() {
      this.follow(undefined);
    },
  };
}
