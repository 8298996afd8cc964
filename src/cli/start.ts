/** `portico start`: load, listen, reload on SIGHUP or file change, drain on SIGTERM/SIGINT. */
import { listenerProtocols } from '../server/public-listener.js';
import cluster from 'node:cluster';
import type { CliArgs } from './args.js';
import { loadConfigWithPlugins } from '../plugins/load.js';
import { formatProblem } from '../config/problems.js';
import { createGateway } from '../gateway.js';
import { createLogger } from '../observability/logger.js';
import { onSighup, reloadFromFile, watchConfigFile } from '../ops/reload.js';
import { drainsWithDelay, installShutdown } from '../ops/shutdown.js';
import { appliedV8Tuning } from './v8-tuning.js';
import { startedByNpm, stopWhenOrphaned } from './parent-watch.js';
import { listenForPrimary, runPrimary } from './workers.js';

/** Resolves -1 once listening (the process keeps running); 1 when it cannot start. */
export async function runStart(args: CliArgs, env: NodeJS.ProcessEnv): Promise<number> {
  if (args.workers > 1 && cluster.isPrimary) return runPrimary(args, env);
  const result = await loadConfigWithPlugins(args.config, env);
  if (!result.ok) {
    process.stderr.write(result.problems.map(formatProblem).join('\n') + '\n');
    process.stderr.write(`portico: refusing to start: ${result.problems.length} problem(s) in ${args.config}\n`);
    return 1;
  }
  // A cluster worker tags its logs; the primary does the watching and forwards signals.
  const logger = cluster.isWorker ? createLogger().child({ worker: cluster.worker?.id }) : createLogger();
  const gateway = createGateway({ config: result.config, plugins: result.plugins, logger });
  // A wrong Redis password or host is a mistake to fix, not an outage to ride out.
  const redisProblem = await gateway.redis?.started;
  if (redisProblem !== undefined) {
    process.stderr.write(`portico: refusing to start: ${redisProblem}\n`);
    await gateway.close();
    return 1;
  }
  let address;
  try {
    address = await gateway.listen(args.port ?? result.config.settings.port, args.host ?? result.config.settings.host);
  } catch (err) {
    process.stderr.write(
      `portico: ${listenFailure(err, args.host ?? result.config.settings.host, args.port ?? result.config.settings.port)}\n`,
    );
    return 1;
  }
  // Handlers first, then the "listening" line: whoever waits for that line may act at once.
  const reload = (why: string) => void reloadFromFile(gateway, args.config, env, why);
  onSighup(() => reload('SIGHUP'));
  if (args.watch && !cluster.isWorker) watchConfigFile(args.config, () => reload('file change'));
  const stop = installShutdown(gateway, {
    logger,
    drainDelayMs: (reason) => (drainsWithDelay(reason) ? gateway.config().settings.shutdown.drainDelaySec * 1000 : 0),
  });
  if (!cluster.isWorker && startedByNpm(env)) stopWhenOrphaned(stop);
  if (cluster.isWorker) listenForPrimary({ reload: () => reload('primary'), stop });
  logger.info(
    {
      address: address.address,
      port: address.port,
      tls: result.config.tls !== undefined,
      protocols: listenerProtocols(result.config.tls !== undefined, result.config.settings.http2),
      ...(gateway.redirectAddress() === undefined ? {} : { redirectPort: gateway.redirectAddress()!.port }),
      routes: result.config.routes.length,
      config: args.config,
      v8: appliedV8Tuning(),
    },
    `portico listening on ${result.config.tls === undefined ? 'http' : 'https'}://${address.address}:${address.port}`,
  );
  return -1;
}

/** Why the port could not be taken, and what to do about it, in one line. */
export function listenFailure(err: unknown, host: string, port: number): string {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch ((err as { code?: unknown }).code) {
    case 'EADDRINUSE':
      return `cannot listen on ${where}: another process listens there (--port or $PORT to choose another)`;
    case 'EACCES':
      return `cannot listen on ${where}: permission denied (ports below 1024 need privileges; --port or $PORT to choose another)`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${where}: no network interface has that address (--host to choose another, 0.0.0.0 for all)`;
    default:
      return `cannot listen on ${where}: ${(err as Error).message}`;
  }
}
