#!/usr/bin/env node
/** `portico start | check | routes` (DECISIONS.md). Parses arguments and calls into the rest. */
import './tune-v8.js';
import { readFileSync } from 'node:fs';
import { parseCli, USAGE, UsageError } from './args.js';
import { loadConfig } from '../config/compile.js';
import { formatProblem } from '../config/problems.js';
import { formatRoutes } from './routes-table.js';
import { runStart } from './start.js';

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
      process.stderr.write(`portico: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    throw err;
  }
  switch (args.verb) {
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
      process.stdout.write(args.verb === 'check' ? `${args.config}: ok (${result.config.routes.length} routes)\n` : formatRoutes(result.config));
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
