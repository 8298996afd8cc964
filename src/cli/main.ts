#!/usr/bin/env node
/** `portico start | check | routes | token`. Parses arguments and calls into the rest. */
import './tune-v8.js';
import { readFileSync } from 'node:fs';
import { parseCli, USAGE, UsageError } from './args.js';
import { loadConfig } from '../config/compile.js';
import { loadConfigFile } from '../config/load.js';
import { formatProblem } from '../config/problems.js';
import { resolveProblems } from './resolve-hosts.js';
import { formatRoutes } from './routes-table.js';
import { runStart } from './start.js';
import { runToken } from './token.js';

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

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
      const result = runInit(args, env);
      process.stdout.write(result.stdout);
      process.stderr.write(result.stderr);
      return result.code;
    }
    case 'help':
      process.stdout.write(USAGE);
      return 0;
    case 'version':
      process.stdout.write(`portico ${version()}\n`);
      return 0;
    case 'check':
    case 'routes': {
      const result = loadConfig(args.config, env);
      if (!result.ok) {
        process.stderr.write(result.problems.map(formatProblem).join('\n') + '\n');
        return 1;
      }
      // Warnings and notes about a valid file: printed, but the exit code stays 0.
      if (args.verb === 'check' && result.notices.length > 0) process.stderr.write(result.notices.map(formatProblem).join('\n') + '\n');
      if (args.verb === 'routes') {
        process.stdout.write(formatRoutes(result.config));
        return 0;
      }
      if (args.resolve) {
        const parsed = loadConfigFile(args.config, env);
        const problems = await resolveProblems(result.config, parsed.locate);
        if (problems.length > 0) {
          process.stderr.write(problems.map(formatProblem).join('\n') + '\n');
          return 1;
        }
      }
      process.stdout.write(`${args.config}: ok (${result.config.routes.length} routes${args.resolve ? ', every host resolves' : ''})\n`);
      return 0;
    }
    case 'token': {
      const result = await runToken(args, env);
      if (!result.ok) {
        process.stderr.write(result.code === 2 ? `portico: ${result.message}\n` : `${result.message}\n`);
        return result.code;
      }
      process.stdout.write(`${result.token}\n`);
      return 0;
    }
    case 'start':
      return runStart(args, env);
  }
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
