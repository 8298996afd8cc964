#!/usr/bin/env node
/** `portico start | check | routes | status | token | key | init`. Parses arguments and calls into the rest. */
import './tune-v8.js';
import { parseCli, USAGE, UsageError, type CliArgs } from './args.js';
import { packageVersion } from '../ops/package-version.js';

// Each command imports what it needs when it runs: a usage mistake, --help or --version answers
// without loading the gateway.

/** Runs the command in `argv`; resolves its exit code, negative for `start`, which sets its own. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let args;
  try {
    args = parseCli(argv, env);
  } catch (err) {
    if (err instanceof UsageError) {
      // A wrong option or value is one line; a missing or unknown command gets the usage text too.
      process.stderr.write(err.showUsage ? `portico: ${err.message}\n\n${USAGE}` : `portico: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  switch (args.verb) {
    case 'init': {
      const { runInit } = await import('./init.js');
      const { runInitPlugin } = await import('./init-plugin.js');
      const result =
        args.plugin === undefined ? runInit(args, env) : runInitPlugin(args.plugin, args.config, args.force);
      process.stdout.write(result.stdout);
      process.stderr.write(result.stderr);
      return result.code;
    }
    case 'help':
      process.stdout.write(USAGE);
      return 0;
    case 'version':
      process.stdout.write(`portico ${packageVersion()}\n`);
      return 0;
    case 'check':
    case 'routes':
      return checkConfig(args, env);
    case 'token': {
      const { runToken } = await import('./token.js');
      const result = await runToken(args, env);
      if (!result.ok) {
        process.stderr.write(result.code === 2 ? `portico: ${result.message}\n` : `${result.message}\n`);
        return result.code;
      }
      if (result.warning !== undefined) process.stderr.write(`portico: ${result.warning}\n`);
      process.stdout.write(`${result.token}\n`);
      return 0;
    }
    case 'key': {
      const { newApiKey } = await import('./key.js');
      const { key, hash } = newApiKey();
      process.stdout.write(`key:  ${key}\nhash: ${hash}\n`);
      return 0;
    }
    case 'status': {
      const { runStatus } = await import('./status.js');
      const result = await runStatus(args, env);
      process.stdout.write(result.stdout);
      process.stderr.write(result.stderr);
      return result.code;
    }
    case 'start': {
      const { runStart } = await import('./start.js');
      return runStart(args, env);
    }
  }
}

/** `check` and `routes`: the file's problems, or its notices and an ok line, or its route table. */
async function checkConfig(args: CliArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const { loadConfigWithPlugins } = await import('../plugins/load.js');
  const { formatProblem } = await import('../config/problems.js');
  // The plugins are imported too: their options are checked against the schemas they declare.
  const result = await loadConfigWithPlugins(args.config, env);
  if (!result.ok) {
    process.stderr.write(result.problems.map(formatProblem).join('\n') + '\n');
    return 1;
  }
  // Warnings and notes about a valid file: printed, but the exit code stays 0.
  if (args.verb === 'check' && result.notices.length > 0)
    process.stderr.write(result.notices.map(formatProblem).join('\n') + '\n');
  if (args.verb === 'routes') {
    const { formatRoutes } = await import('./routes-table.js');
    process.stdout.write(formatRoutes(result.config));
    return 0;
  }
  if (args.resolve) {
    const { parseConfigFile } = await import('../config/parse.js');
    const { resolveProblems } = await import('./resolve-hosts.js');
    const parsed = parseConfigFile(args.config, env);
    const { hideEnvValues } = await import('../config/hide-env-values.js');
    const problems = hideEnvValues(await resolveProblems(result.config, parsed.locate), parsed.envValues);
    if (problems.length > 0) {
      process.stderr.write(problems.map(formatProblem).join('\n') + '\n');
      return 1;
    }
  }
  process.stdout.write(
    `${args.config}: ok (${result.config.routes.length} routes${args.resolve ? ', every host resolves' : ''})\n`,
  );
  // Where the metrics can be read: they name every route and origin (docs/observability.md).
  const { describeMetricsAccess } = await import('../ops/metrics-access.js');
  process.stdout.write(`${describeMetricsAccess(result.config.settings)}\n`);
  return 0;
}

main(process.argv.slice(2), process.env).then(
  (code) => {
    // `start` keeps running; it sets the exit code itself when it stops.
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`portico: ${(err as Error).message}\n`);
    process.exitCode = 1;
  },
);
