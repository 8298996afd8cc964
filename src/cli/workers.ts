/**
 * `portico start --workers N|auto` (node:cluster). The primary validates the configuration,
 * forks N workers that share the listening port, and serves no request itself:
 * - SIGHUP or a file change (`--watch`): the primary validates the file once (an invalid one is
 *   logged once and nothing changes), then tells every worker to reload;
 * - SIGTERM / SIGINT: every worker drains (after `shutdown.drainDelaySec` on SIGTERM) and
 *   exits 0, then the primary exits 0 (1 if a worker failed); a second signal kills what is left;
 * - a worker that dies unexpectedly is replaced; five deaths within 30 s stop the gateway.
 * Messages go over the cluster IPC channel (no signals), so the same works on every platform.
 */
import cluster, { type Worker } from 'node:cluster';
import type { CliArgs } from './args.js';
import { loadConfig } from '../config/load.js';
import { loadConfigWithPlugins } from '../plugins/load.js';
import { formatProblem } from '../config/problems.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { servePrimaryMetrics } from '../observability/cluster-metrics.js';
import { onSighup, watchConfigFile } from '../ops/reload.js';
import { drainsWithDelay, flushThen } from '../ops/shutdown.js';
import { startedByNpm, stopWhenOrphaned } from './parent-watch.js';
import { redisStartProblem } from '../redis/connection.js';

const RELOAD = 'portico:reload';
const SHUTDOWN = 'portico:shutdown';
/** A shutdown with the drain delay (the primary got SIGTERM). */
const DRAIN = 'portico:drain';
/** Drain (15 s) plus a margin before the primary kills what is left. */
const STOP_DEADLINE_MS = 20_000;
const CRASH_WINDOW_MS = 30_000;
const MAX_CRASHES = 5;

/** Worker side: obey the primary, and stop when the primary is gone. */
export function listenForPrimary(handlers: { reload(): void; stop(reason: string): void }): void {
  process.on('message', (message: unknown) => {
    if (message === RELOAD) handlers.reload();
    else if (message === SHUTDOWN) handlers.stop('primary');
    else if (message === DRAIN) handlers.stop('SIGTERM');
  });
  process.on('disconnect', () => handlers.stop('primary gone'));
}

/** Primary side; resolves -1 once the workers are forked, 1 when the configuration is invalid. */
export async function runPrimary(args: CliArgs, env: NodeJS.ProcessEnv): Promise<number> {
  // The plugins too: a module that cannot be imported would fail every worker.
  const result = await loadConfigWithPlugins(args.config, env);
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
  const primary = new Primary(args, env, logger, result.config.settings.shutdown.drainDelaySec * 1000);
  for (let i = 0; i < args.workers; i++) primary.fork();
  logger.info(
    { workers: args.workers, pid: process.pid, config: args.config },
    `portico primary: starting ${args.workers} workers`,
  );
  onSighup(() => primary.reload('SIGHUP'));
  if (args.watch) watchConfigFile(args.config, () => primary.reload('file change'));
  process.on('SIGTERM', () => primary.stop('SIGTERM'));
  process.on('SIGINT', () => primary.stop('SIGINT'));
  if (startedByNpm(env)) stopWhenOrphaned((reason) => primary.stop(reason));
  return -1;
}

/** The primary's workers: forks them, replaces those that die, passes reloads on, stops them. */
class Primary {
  private readonly workers = new Set<Worker>();
  /** When workers died unexpectedly, within the last CRASH_WINDOW_MS. */
  private readonly crashes: number[] = [];
  private stopping = false;
  private exitCode = 0;

  constructor(
    private readonly args: CliArgs,
    private readonly env: NodeJS.ProcessEnv,
    private readonly logger: Logger,
    /** The workers' drain delay on SIGTERM, as the file last loaded says. */
    private drainDelayMs: number,
  ) {}

  fork(): void {
    const worker = cluster.fork({ PORTICO_CLUSTER: '1' });
    this.workers.add(worker);
    worker.on('exit', (code, signal) => this.onExit(worker, code, signal));
  }

  /** Validates the file once (an invalid one is logged and changes nothing), then tells every worker. */
  reload(why: string): void {
    const next = loadConfig(this.args.config, this.env);
    if (!next.ok) {
      this.logger.error(
        { file: this.args.config, problems: next.problems.map(formatProblem) },
        'configuration reload rejected; keeping the running configuration',
      );
      return;
    }
    this.drainDelayMs = next.config.settings.shutdown.drainDelaySec * 1000;
    for (const w of this.workers) if (w.isConnected()) w.send(RELOAD);
    this.logger.info({ why, workers: this.workers.size }, 'reload sent to workers');
  }

  /** Drains every worker, then exits; a second call kills what is left. */
  stop(reason: string): void {
    const { workers, logger } = this;
    if (this.stopping) {
      logger.warn({ reason }, 'second stop request: killing the workers');
      for (const w of workers) w.process.kill('SIGKILL');
      flushThen(logger, () => process.exit(1));
      return;
    }
    this.stopping = true;
    logger.info({ reason, workers: workers.size }, 'stopping workers');
    if (workers.size === 0) flushThen(logger, () => process.exit(this.exitCode));
    for (const w of workers) {
      if (w.isConnected()) w.send(drainsWithDelay(reason) ? DRAIN : SHUTDOWN);
      else w.process.kill('SIGTERM');
    }
    setTimeout(
      () => {
        logger.error({ left: workers.size }, 'workers did not stop in time; killing them');
        for (const w of workers) w.process.kill('SIGKILL');
        flushThen(logger, () => process.exit(1));
      },
      STOP_DEADLINE_MS + (drainsWithDelay(reason) ? this.drainDelayMs : 0),
    ).unref();
  }

  private onExit(worker: Worker, code: number | null, signal: string | null): void {
    const { workers, crashes, logger } = this;
    workers.delete(worker);
    if (this.stopping) {
      if (code !== 0) this.exitCode = 1;
      if (workers.size === 0) {
        logger.info({ exitCode: this.exitCode }, 'all workers stopped');
        flushThen(logger, () => process.exit(this.exitCode));
      }
      return;
    }
    const now = Date.now();
    crashes.push(now);
    while (crashes.length > 0 && crashes[0]! < now - CRASH_WINDOW_MS) crashes.shift();
    if (crashes.length >= MAX_CRASHES) {
      logger.fatal({ worker: worker.id, code, signal, crashes: crashes.length }, 'workers keep dying; stopping');
      this.exitCode = 1;
      this.stop('crash loop');
      return;
    }
    logger.error({ worker: worker.id, code, signal }, 'worker exited unexpectedly; starting a new one');
    setTimeout(() => {
      if (!this.stopping) this.fork();
    }, 500);
  }
}
