/**
 * `portico start --workers N|auto` (node:cluster). The primary validates the configuration,
 * forks N workers that share the listening port, and serves no request itself:
 * - SIGHUP or a file change (`--watch`): the primary validates the file once (an invalid one is
 *   logged once and nothing changes), then tells every worker to reload;
 * - SIGTERM / SIGINT: every worker drains and exits 0, then the primary exits 0 (1 if a worker
 *   failed); a second signal kills what is left;
 * - a worker that dies unexpectedly is replaced; five deaths within 30 s stop the gateway.
 * Messages go over the cluster IPC channel (no signals), so the same works on every platform.
 */
import cluster, { type Worker } from 'node:cluster';
import type { CliArgs } from './args.js';
import { loadConfig } from '../config/load.js';
import { formatProblem } from '../config/problems.js';
import { createLogger } from '../observability/logger.js';
import { servePrimaryMetrics } from '../observability/cluster-metrics.js';
import { onSighup, watchConfigFile } from '../ops/reload.js';
import { flushThen } from '../ops/shutdown.js';
import { startedByNpm, stopWhenOrphaned } from './parent-watch.js';
import { redisStartProblem } from '../redis/connection.js';

const RELOAD = 'portico:reload';
const SHUTDOWN = 'portico:shutdown';
/** Drain (15 s) plus a margin before the primary kills what is left. */
const STOP_DEADLINE_MS = 20_000;
const CRASH_WINDOW_MS = 30_000;
const MAX_CRASHES = 5;

/** Worker side: obey the primary, and stop when the primary is gone. */
export function listenForPrimary(handlers: { reload(): void; stop(reason: string): void }): void {
  process.on('message', (message: unknown) => {
    if (message === RELOAD) handlers.reload();
    else if (message === SHUTDOWN) handlers.stop('primary');
  });
  process.on('disconnect', () => handlers.stop('primary gone'));
}

/** Primary side; resolves -1 once the workers are forked, 1 when the configuration is invalid. */
export async function runPrimary(args: CliArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const result = loadConfig(args.config, env);
  if (!result.ok) {
    process.stderr.write(result.problems.map(formatProblem).join('\n') + '\n');
    process.stderr.write(`portico: refusing to start: ${result.problems.length} problem(s) in ${args.config}\n`);
    return 1;
  }
  const logger = createLogger().child({ role: 'primary' });
  // Checked once here rather than by N workers that would each fail and be replaced.
  const redisProblem = await redisStartProblem(result.config, logger);
  if (redisProblem !== undefined) {
    process.stderr.write(`portico: refusing to start: ${redisProblem}\n`);
    return 1;
  }
  servePrimaryMetrics();
  const workers = new Set<Worker>();
  const crashes: number[] = [];
  let stopping = false;
  let exitCode = 0;

  const fork = () => {
    const worker = cluster.fork({ PORTICO_CLUSTER: '1' });
    workers.add(worker);
    worker.on('exit', (code, signal) => onExit(worker, code, signal));
  };

  const onExit = (worker: Worker, code: number | null, signal: string | null) => {
    workers.delete(worker);
    if (stopping) {
      if (code !== 0) exitCode = 1;
      if (workers.size === 0) {
        logger.info({ exitCode }, 'all workers stopped');
        flushThen(logger, () => process.exit(exitCode));
      }
      return;
    }
    const now = Date.now();
    crashes.push(now);
    while (crashes.length > 0 && crashes[0]! < now - CRASH_WINDOW_MS) crashes.shift();
    if (crashes.length >= MAX_CRASHES) {
      logger.fatal({ worker: worker.id, code, signal, crashes: crashes.length }, 'workers keep dying; stopping');
      exitCode = 1;
      stop('crash loop');
      return;
    }
    logger.error({ worker: worker.id, code, signal }, 'worker exited unexpectedly; starting a new one');
    setTimeout(() => {
      if (!stopping) fork();
    }, 500);
  };

  const reload = (why: string) => {
    const next = loadConfig(args.config, env);
    if (!next.ok) {
      logger.error(
        { file: args.config, problems: next.problems.map(formatProblem) },
        'configuration reload rejected; keeping the running configuration',
      );
      return;
    }
    for (const w of workers) if (w.isConnected()) w.send(RELOAD);
    logger.info({ why, workers: workers.size }, 'reload sent to workers');
  };

  const stop = (reason: string) => {
    if (stopping) {
      logger.warn({ reason }, 'second stop request: killing the workers');
      for (const w of workers) w.process.kill('SIGKILL');
      flushThen(logger, () => process.exit(1));
      return;
    }
    stopping = true;
    logger.info({ reason, workers: workers.size }, 'stopping workers');
    if (workers.size === 0) flushThen(logger, () => process.exit(exitCode));
    for (const w of workers) {
      if (w.isConnected()) w.send(SHUTDOWN);
      else w.process.kill('SIGTERM');
    }
    setTimeout(() => {
      logger.error({ left: workers.size }, 'workers did not stop in time; killing them');
      for (const w of workers) w.process.kill('SIGKILL');
      flushThen(logger, () => process.exit(1));
    }, STOP_DEADLINE_MS).unref();
  };

  for (let i = 0; i < args.workers; i++) fork();
  logger.info(
    { workers: args.workers, pid: process.pid, config: args.config },
    `portico primary: starting ${args.workers} workers`,
  );
  onSighup(() => reload('SIGHUP'));
  if (args.watch) watchConfigFile(args.config, () => reload('file change'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  if (startedByNpm(env)) stopWhenOrphaned(stop);
  return -1;
}
