import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';

export interface CliArgs {
  readonly verb: 'start' | 'check' | 'routes' | 'help' | 'version';
  readonly config: string;
  readonly port: number | undefined;
  readonly host: string | undefined;
  readonly watch: boolean;
  /** `--workers N|auto`: processes serving the port (node:cluster); 1 = no cluster. */
  readonly workers: number;
}

export const USAGE = `Usage: portico <command> [options]

Commands:
  start    Run the gateway
  check    Validate a configuration file (exit 0 when valid, 1 with every problem on stderr)
  routes   Print the route table as the gateway will serve it

Options:
  -c, --config FILE   Configuration file (default: $PORTICO_CONFIG, else ./gateway.yaml)
  -p, --port N        Listen port, overrides config.port and $PORT (start)
      --host ADDR     Listen address, overrides config.host (start)
  -w, --watch         Reload when the configuration file changes (start)
      --workers N     Serve with N worker processes, or "auto" for one per CPU (start; default 1)
  -h, --help          Show this help
  -v, --version       Show the version
`;

export class UsageError extends Error {}

/** Parses argv (without node and script). Throws UsageError with a one-line reason. */
export function parseCli(argv: readonly string[], env: NodeJS.ProcessEnv): CliArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        config: { type: 'string', short: 'c' },
        port: { type: 'string', short: 'p' },
        host: { type: 'string' },
        watch: { type: 'boolean', short: 'w', default: false },
        workers: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
        version: { type: 'boolean', short: 'v', default: false },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  const verbs = ['start', 'check', 'routes'] as const;
  let verb: CliArgs['verb'];
  if (values.help) verb = 'help';
  else if (values.version) verb = 'version';
  else if (positionals.length === 0) verb = 'help';
  else {
    const v = positionals[0]!;
    if (!(verbs as readonly string[]).includes(v)) throw new UsageError(`unknown command "${v}" (expected start, check or routes)`);
    if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
    verb = v as CliArgs['verb'];
  }
  const portText = values.port ?? env.PORT;
  let port: number | undefined;
  if (portText !== undefined && portText !== '') {
    port = Number(portText);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`invalid port "${portText}" (expected 0-65535)`);
  }
  const workers = parseWorkers(values.workers ?? env.PORTICO_WORKERS);
  return {
    verb,
    config: values.config ?? env.PORTICO_CONFIG ?? 'gateway.yaml',
    port,
    host: values.host,
    watch: values.watch ?? false,
    workers,
  };
}

/** `N` (1-1024) or `auto` (one per CPU the process may use). */
function parseWorkers(text: string | undefined): number {
  if (text === undefined || text === '') return 1;
  if (text === 'auto') return availableParallelism();
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 1024) throw new UsageError(`invalid --workers "${text}" (expected a number from 1 to 1024, or auto)`);
  return n;
}
