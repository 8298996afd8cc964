/** `portico start`: load, listen, reload on SIGHUP or file change, drain on SIGTERM/SIGINT. */
import { watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { CliArgs } from './args.js';
import { loadConfig } from '../config/compile.js';
import { formatProblem } from '../config/problems.js';
import { createGateway } from '../gateway.js';
import { flushLogger } from '../observability/logger.js';

/** Resolves -1 once listening (the process keeps running); 1 when it cannot start. */
export async function runStart(args: CliArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const result = loadConfig(args.config, env);
  if (!result.ok) {
    process.stderr.write(result.problems.map(formatProblem).join('\n') + '\n');
    process.stderr.write(`portico: refusing to start: ${result.problems.length} problem(s) in ${args.config}\n`);
    return 1;
  }
  const gateway = createGateway({ config: result.config });
  const { logger } = gateway;
  let address;
  try {
    address = await gateway.listen(args.port ?? result.config.settings.port, args.host ?? result.config.settings.host);
  } catch (err) {
    process.stderr.write(`portico: cannot listen: ${(err as Error).message}\n`);
    return 1;
  }
  logger.info({ address: address.address, port: address.port, routes: result.config.routes.length, config: args.config }, `portico listening on ${address.address}:${address.port}`);

  const reload = (why: string) => {
    const next = loadConfig(args.config, env);
    if (!next.ok) {
      gateway.events.emit('config:reload', { file: args.config, ok: false, problems: next.problems.map(formatProblem) });
      return;
    }
    try {
      gateway.reload(next.config);
      gateway.events.emit('config:reload', { file: args.config, ok: true });
      logger.info({ why, routes: next.config.routes.length }, 'reloaded');
    } catch (err) {
      logger.error({ err }, 'reload failed; keeping the running configuration');
    }
  };
  process.on('SIGHUP', () => reload('SIGHUP'));
  if (args.watch) {
    let timer: NodeJS.Timeout | undefined;
    // Watch the folder, not the file: editors replace the file (a new inode) when saving.
    // They also write in several steps, so debounce to reload once on the final content.
    const name = basename(args.config);
    watch(dirname(args.config), (_event, changed) => {
      if (changed !== null && changed !== name) return;
      clearTimeout(timer);
      timer = setTimeout(() => reload('file change'), 200);
    }).unref();
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining: finishing in-flight requests');
    gateway.close().then(
      () => {
        logger.info('stopped');
        flushLogger(logger);
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'error while stopping');
        flushLogger(logger);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  return -1;
}
