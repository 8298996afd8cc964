/**
 * Runs the CLI once to completion, the way a user types it, and returns its exit code and output.
 * `PORT` and `PORTICO_CONFIG` from the test's own environment are removed so that they cannot
 * change the outcome; pass them in `env` when a test is about them.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const cli = `${ROOT}src/cli/main.ts`;
/** Resolved here, so that a run in a directory outside the checkout still finds the loader. */
const tsx = import.meta.resolve('tsx');

/** Preload for a gateway process: `.invalid` host names fail to resolve without a DNS query. */
export const FAKE_DNS_NODE_OPTIONS = `--import=${new URL('./fake-dns.mjs', import.meta.url).href}`;

/** What `portico check` prints after its `ok` line for a file that says nothing about metrics. */
export const DEFAULT_METRICS_LINE =
  'metrics: GET /metrics on the public port (8080) to loopback clients only; other scrapers need config.admin, config.telemetry.metricsToken or config.telemetry.metricsPublic\n';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function runScript(
  script: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.PORT;
  delete env.PORTICO_CONFIG;
  delete env.PORTICO_LOG_LEVEL;
  delete env.JWT_SECRET;
  Object.assign(env, options.env);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', tsx, script, ...args],
      { cwd: options.cwd ?? ROOT, env, timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** `portico ARGS` */
export function runPortico(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> {
  return runScript(cli, args, options);
}

/**
 * Asserts that a run exited 0 and printed exactly `lines` on stdout, each ended by a newline.
 * @example assertPrinted(await runPortico(['routes'], { cwd }), ['METHOD  ROUTE ...', 'GET,HEAD  /api/a ...']);
 */
export function assertPrinted(run: CliRun, lines: readonly string[]): void {
  assert.equal(run.code, 0);
  assert.equal(run.stdout, [...lines, ''].join('\n'));
}
