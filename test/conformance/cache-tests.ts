/**
 * `npm run test:cache-conformance`: the public HTTP cache test suite (http-tests/cache-tests, the
 * suite behind cache-tests.fyi, BSD-3) against Portico as a reverse proxy (docs/caching.md
 * "Conformance"). The suite's test server is the backend; a Portico on an ephemeral port routes
 * every path to it (`/*`, GET with `cache: true` and the heuristic on, as a shared cache is tested;
 * the other methods without cache, so that the suite's PUTs reach its server and unsafe methods
 * invalidate); the suite's CLI client runs every test against the gateway. Prints
 * "required passed X/Y, optional passed X/Y" and the failing test ids; writes the raw results to
 * .tmp/cache-tests-results.json.
 *
 * The suite is not vendored: `CACHE_TESTS_DIR` (a checkout), else the pinned commit extracted from
 * a local mirror or downloaded from codeload.github.com into .tmp/cache-tests-<commit>/.
 *
 * `--id=TEST_ID` runs one test and prints the client's dump of its requests and responses.
 * Not part of `npm test`: a full run takes a few minutes (the suite pauses between requests).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConfigText } from '../../src/config/load.js';
import { formatProblem } from '../../src/config/problems.js';
import { createGateway } from '../../src/gateway.js';
import { createLogger } from '../../src/observability/logger.js';
import { formatSummary, summarize, type RawResult, type Suite } from './cache-tests-summary.js';

/** The suite's commit this repository's figures were taken at (package version 0.4.5). */
const CACHE_TESTS_COMMIT = 'b55b8bda3dbb8c927c04e85bd8d496a8caa3e4ba';

const ROOT = resolve(import.meta.dirname, '../..');
const TMP = join(ROOT, '.tmp');
/** Where a lead may have mirrored the repository (a bare git directory). */
const MIRROR = '/work/.mirror/http-tests+cache-tests/repo';

/** The gateway's configuration: every path to the suite's server, GET answers cached. */
function conformanceConfig(backendPort: number): string {
  const service = `127.0.0.1:${backendPort}`;
  const route = (method: string, extra = '') =>
    `  - { method: ${method}, route: /*, service: "${service}", path: /*${extra} }`;
  return [
    'config:',
    // No basePath: the suite's client asks for /config, /test and /state at the root.
    '  basePath: ""',
    '  cache: { heuristic: true }',
    'routes:',
    route('GET', ', cache: true'),
    ...['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].map((m) => route(m)),
    '',
  ].join('\n');
}

function suiteDir(): string {
  const given = process.env.CACHE_TESTS_DIR;
  if (given !== undefined && given !== '') {
    if (!existsSync(join(given, 'test-engine/cli.mjs')))
      throw new Error(`CACHE_TESTS_DIR=${given} is not a checkout of http-tests/cache-tests`);
    return resolve(given);
  }
  const dir = join(TMP, `cache-tests-${CACHE_TESTS_COMMIT}`);
  if (!existsSync(join(dir, 'test-engine/cli.mjs'))) {
    mkdirSync(dir, { recursive: true });
    if (existsSync(MIRROR)) extractFromMirror(dir);
    else download(dir);
  }
  // The client imports undici for the interim-response tests: Portico's own copy serves.
  if (!existsSync(join(dir, 'node_modules'))) symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

function extractFromMirror(dir: string): void {
  const archive = spawnSync('git', ['--git-dir', MIRROR, 'archive', '--format=tar', CACHE_TESTS_COMMIT], {
    maxBuffer: 64 * 1024 * 1024,
  });
  if (archive.status !== 0) throw new Error(`git archive from ${MIRROR} failed: ${archive.stderr.toString()}`);
  const tar = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr.toString()}`);
}

function download(dir: string): void {
  const url = `https://codeload.github.com/http-tests/cache-tests/tar.gz/${CACHE_TESTS_COMMIT}`;
  const got = spawnSync('sh', ['-c', `curl -fsSL --max-time 120 "${url}" | tar -xz --strip-components=1 -C "${dir}"`], {
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  if (got.status !== 0 || !existsSync(join(dir, 'test-engine/cli.mjs'))) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `could not download ${url} (offline?): ${got.stderr.toString().trim()}\n` +
        'Set CACHE_TESTS_DIR to a checkout of https://github.com/http-tests/cache-tests at commit ' +
        CACHE_TESTS_COMMIT,
    );
  }
}

/** Starts the suite's server on an ephemeral port; resolves the port once it listens. */
function startSuiteServer(dir: string, pidDir: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['test-engine/server/server.mjs'], {
    cwd: dir,
    env: {
      ...process.env,
      npm_config_protocol: 'http',
      npm_config_port: '0',
      npm_config_pidfile: join(pidDir, 'server.pid'),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolvePort, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`the suite's server exited (${code}): ${out}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /Listening on http:\/\/\S+:(\d+)\//.exec(out);
      if (m !== null) resolvePort({ child, port: Number(m[1]) });
    });
  });
}

/** Runs the suite's CLI client; resolves what it printed on stdout. */
function runClient(dir: string, base: string, testId: string): Promise<string> {
  const child = spawn(process.execPath, ['--no-warnings', 'test-engine/cli.mjs'], {
    cwd: dir,
    // The client reads npm's variables (`npm run cli --base=... --id=...`), the package's own
    // config as the fallback; an empty id means every test.
    env: { ...process.env, npm_config_base: base, npm_config_id: testId, npm_package_config_id: testId },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((done, reject) =>
    child.once('exit', (code) => (code === 0 ? done(out) : reject(new Error(`the suite's client exited (${code})`)))),
  );
}

async function main(): Promise<number> {
  const idArg = process.argv.slice(2).find((a) => a.startsWith('--id='));
  const testId = idArg === undefined ? '' : idArg.slice('--id='.length);
  const dir = suiteDir();
  const pidDir = mkdtempSync(join(tmpdir(), 'portico-cache-tests-'));
  const server = await startSuiteServer(dir, pidDir);
  try {
    const loaded = loadConfigText(conformanceConfig(server.port), 'cache-conformance.yaml', {});
    if (!loaded.ok) throw new Error(loaded.problems.map(formatProblem).join('\n'));
    const logger = createLogger({ level: 'error', destination: process.stderr });
    const gateway = createGateway({ config: loaded.config, logger, drainTimeoutMs: 1000 });
    const address = await gateway.listen(0, '127.0.0.1');
    try {
      const base = `http://127.0.0.1:${address.port}`;
      process.stderr.write(`cache-tests ${CACHE_TESTS_COMMIT.slice(0, 7)} from ${dir}: client -> Portico ${base}\n`);
      const out = await runClient(dir, base, testId);
      if (testId !== '') {
        process.stdout.write(out);
        return 0;
      }
      const results = JSON.parse(out) as Record<string, RawResult>;
      mkdirSync(TMP, { recursive: true });
      writeFileSync(join(TMP, 'cache-tests-results.json'), `${JSON.stringify(results, null, 2)}\n`);
      const suites = (await import(pathToFileURL(join(dir, 'tests/index.mjs')).href)) as { default: Suite[] };
      process.stdout.write(`${formatSummary(summarize(suites.default, results))}\n`);
      return 0;
    } finally {
      await gateway.close();
    }
  } finally {
    server.child.kill();
    rmSync(pidDir, { recursive: true, force: true });
  }
}

process.exitCode = await main().catch((err: unknown) => {
  process.stderr.write(`cache conformance: ${(err as Error).message}\n`);
  return 1;
});
