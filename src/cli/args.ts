import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { didYouMean, editDistance } from '../config/problems.js';
import { logLevelProblem } from '../observability/logger.js';

export interface CliArgs {
  readonly verb: 'start' | 'check' | 'routes' | 'status' | 'token' | 'key' | 'init' | 'help' | 'version';
  readonly config: string;
  /** True when `--config` or `$PORTICO_CONFIG` named the file (not the ./gateway.yaml default). */
  readonly configGiven: boolean;
  readonly port: number | undefined;
  readonly host: string | undefined;
  readonly watch: boolean;
  /** `--workers N|auto`: processes serving the port (node:cluster); 1 = no cluster. */
  readonly workers: number;
  /** `check --resolve`: also look up every backend host name. */
  readonly resolve: boolean;
  /** `init --force`: overwrite an existing file. */
  readonly force: boolean;
  /** `init --plugin NAME`: write a plugin skeleton and its test instead of a configuration. */
  readonly plugin: string | undefined;
  /** `status --admin URL`: the admin listener to ask (default: from the configuration's `admin`). */
  readonly admin: string | undefined;
  /** `token`: the signing options as given (validated by the token command). */
  readonly token: {
    readonly secret: string | undefined;
    readonly claims: readonly string[];
    readonly exp: string | undefined;
    readonly alg: string | undefined;
  };
}

export const USAGE = `Usage: portico <command> [options]

Commands:
  start    Run the gateway
  check    Validate a configuration file (exit 0 when valid, 1 with every problem on stderr)
  routes   Print the route table as the gateway will serve it
  status   Print what a running gateway is doing, from its admin listener (config.admin)
  token    Print a signed JWT for local testing (HS256/384/512)
  key      Print a new random API key and the sha256: hash a consumer lists (docs/consumers.md)
  init     Write a commented starter configuration (./gateway.yaml or --config FILE),
           or with --plugin NAME a plugin and its test (plugins/NAME.ts, plugins/NAME.test.ts)

Options:
  -c, --config FILE   Configuration file (default: $PORTICO_CONFIG, else ./gateway.yaml)
  -p, --port N        Listen port, overrides config.port and $PORT (start)
      --host ADDR     Listen address, overrides config.host (start)
  -w, --watch         Reload when the configuration file changes (start)
      --workers N     Serve with N worker processes, or "auto" for one per CPU (start; default 1)
      --resolve       Also check that every backend host name resolves (check)
      --secret S      HMAC secret (token; default: $JWT_SECRET, else the config's auth.secret)
      --claim K=V     A claim of the token, repeatable: --claim sub=1 --claim role=admin (token)
      --exp DURATION  Lifetime of the token: 30s, 15m, 1h, 7d (token; default 1h)
      --alg ALG       HS256, HS384 or HS512 (token; default HS256)
      --force         Overwrite an existing file (init)
      --plugin NAME   Write a plugin skeleton and its test next to the configuration (init)
      --admin URL     The admin listener to ask (status; default: config.admin of the configuration)
  -h, --help          Show this help
  -v, --version       Show the version

Environment: PORT, PORTICO_CONFIG, PORTICO_LOG_LEVEL, PORTICO_WORKERS, JWT_SECRET (token), PORTICO_ADMIN_TOKEN (status).
`;

/** A mistake in the command line or its environment: exit 2, one line on stderr. */
export class UsageError extends Error {
  /** True when the mistake is about the command itself, so the usage text helps. */
  readonly showUsage: boolean;
  constructor(message: string, options: { showUsage?: boolean } = {}) {
    super(message);
    this.showUsage = options.showUsage ?? false;
  }
}

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  port: { type: 'string', short: 'p' },
  host: { type: 'string' },
  watch: { type: 'boolean', short: 'w', default: false },
  workers: { type: 'string' },
  resolve: { type: 'boolean', default: false },
  secret: { type: 'string' },
  claim: { type: 'string', multiple: true },
  exp: { type: 'string' },
  alg: { type: 'string' },
  force: { type: 'boolean', default: false },
  plugin: { type: 'string' },
  admin: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', short: 'v', default: false },
} as const;

const VERBS = ['start', 'check', 'routes', 'status', 'token', 'key', 'init'] as const;

/** Parses argv (without node and script). Throws UsageError with a one-line reason. */
export function parseCli(argv: readonly string[], env: NodeJS.ProcessEnv): CliArgs {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: OPTIONS });
  } catch (err) {
    throw new UsageError(describeParseError(err));
  }
  const { values, positionals } = parsed;
  let verb: CliArgs['verb'];
  if (values.help) verb = 'help';
  else if (values.version) verb = 'version';
  else if (positionals.length === 0)
    throw new UsageError('missing command (start, check, routes, status, token, key or init)', { showUsage: true });
  else {
    const v = positionals[0]!;
    if (!(VERBS as readonly string[]).includes(v)) {
      const near = didYouMean(v, VERBS);
      throw new UsageError(
        `unknown command "${v}" (${near === undefined ? 'expected start, check, routes, status, token, key or init' : `did you mean ${near}?`})`,
        { showUsage: true },
      );
    }
    if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
    verb = v as CliArgs['verb'];
  }
  const port = parsePort(values.port, env.PORT);
  const workers = parseWorkers(values.workers, env.PORTICO_WORKERS);
  // Checked here, before anything starts, so that the mistake is one line naming the variable.
  if (verb === 'start') {
    const problem = logLevelProblem(env.PORTICO_LOG_LEVEL);
    if (problem !== undefined) throw new UsageError(`$PORTICO_LOG_LEVEL: ${problem}`);
  }
  const configText = values.config ?? (env.PORTICO_CONFIG === '' ? undefined : env.PORTICO_CONFIG);
  return {
    verb,
    config: configText ?? 'gateway.yaml',
    configGiven: configText !== undefined,
    port,
    host: values.host,
    watch: values.watch ?? false,
    workers,
    resolve: values.resolve ?? false,
    force: values.force ?? false,
    plugin: values.plugin,
    admin: values.admin,
    token: { secret: values.secret, claims: values.claim ?? [], exp: values.exp, alg: values.alg },
  };
}

/** node:util parseArgs errors, reworded: one line, with a "did you mean" for near misses. */
function describeParseError(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  const message = (err as Error).message;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const option = /'([^']+)'/.exec(message)?.[1] ?? '';
    const near = option.startsWith('--') ? nearestOption(option.slice(2).split('=')[0]!) : undefined;
    return near === undefined
      ? `unknown option ${option} (portico --help lists the options)`
      : `unknown option ${option} (did you mean --${near}?)`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const option = /--[a-z-]+/.exec(message)?.[0] ?? 'an option';
    if (/argument missing/.test(message)) return `option ${option} needs a value`;
    if (/does not take an argument/.test(message)) return `option ${option} takes no value`;
  }
  return message;
}

/** The nearest option within two edits, fewer for short words (a swapped pair of letters counts two: --prot, --port). */
function nearestOption(word: string): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.min(2, Math.floor(word.length / 2)) + 1;
  for (const name of Object.keys(OPTIONS)) {
    const d = editDistance(word.toLowerCase(), name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best;
}

/** `--port` wins over `$PORT`; the message names the one that was wrong. */
function parsePort(flag: string | undefined, envValue: string | undefined): number | undefined {
  const [text, source] = flag !== undefined ? [flag, '--port'] : [envValue, '$PORT'];
  if (text === undefined || text === '') return undefined;
  const port = Number(text);
  if (!/^\d+$/.test(text.trim()) || port > 65535)
    throw new UsageError(`invalid ${source} "${text}": expected a port number from 0 to 65535`);
  return port;
}

/** `N` (1-1024) or `auto` (one per CPU the process may use). */
function parseWorkers(flag: string | undefined, envValue: string | undefined): number {
  const [text, source] = flag !== undefined ? [flag, '--workers'] : [envValue, '$PORTICO_WORKERS'];
  if (text === undefined || text === '') return 1;
  if (text === 'auto') return availableParallelism();
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 1024)
    throw new UsageError(`invalid ${source} "${text}": expected a number from 1 to 1024, or auto`);
  return n;
}
