/**
 * Every YAML and shell example under docs/ runs, so a page cannot drift from the gateway it
 * describes. The fence's info string says how (CONTRIBUTING.md, "Examples in the docs"):
 *
 * - `yaml`: a whole configuration file, loaded through the real loader and validator; it must be
 *   valid. `yaml fragment`: part of a file (a `config` part, or a few routes), completed with one
 *   base route when it has no `routes`. `yaml invalid`:
 *   must be refused. `file=NAME`: also written as NAME for the page's shell examples.
 * - `console`: a session. Each `$ ` line is run by bash in one shell per block (so variables carry
 *   over), and the lines up to the next `$ ` are its expected output (stdout and stderr): `...` on
 *   a line of its own stands for any number of lines, and inside a line for any text. `portico`
 *   is the CLI of this checkout. `console demo` runs against the demo (`npm start`), with
 *   `localhost:8080` pointing at it.
 * - `sh`: a script that must exit 0.
 * - `not-run <reason>` after the language: shown, never run, the reason required (a command that
 *   needs docker, kubectl or root, a file that is not a Portico configuration).
 *
 * The README's YAML examples are loaded the same way.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDemoBackends, type DemoService } from '../../examples/demo/backends.js';
import { formatProblem, loadConfigText } from '../../src/index.js';
import { startGateway, type TestGateway } from '../support/gateway.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSX = import.meta.resolve('tsx');

/** What the examples may read from the environment (`${JWT_SECRET}`, `${METRICS_TOKEN}`, `${ADMIN_TOKEN}`, `${REDIS_PASSWORD}`, `${IDP_CLIENT_SECRET}`, `${ORDERS_KEY}`). */
const EXAMPLE_ENV: NodeJS.ProcessEnv = {
  JWT_SECRET: 'an-example-secret-of-at-least-32-bytes',
  METRICS_TOKEN: 'an-example-metrics-token',
  ADMIN_TOKEN: 'an-example-admin-token',
  REDIS_PASSWORD: 'an-example-redis-password',
  IDP_CLIENT_SECRET: 'an-example-client-secret',
  ORDERS_KEY: 'an-example-orders-api-key',
};

/** Prepended to a `yaml fragment` that has no `routes` of its own: the one route a file needs. */
const BASE_ROUTES = 'routes:\n  - method: GET\n    route: /base\n    service: localhost:3000\n    path: /base\n';

const SHELLS = new Set(['sh', 'bash', 'shell', 'console']);
/** Tags a fence may carry before `not-run`; a misspelt one would silently change how it runs. */
const KNOWN_TAGS = new Set(['fragment', 'invalid', 'demo']);

interface Example {
  readonly page: string;
  readonly line: number;
  readonly lang: string;
  readonly tags: readonly string[];
  readonly text: string;
}

function examplesOf(page: string): Example[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    const start = i;
    let end = i + 1;
    while (end < lines.length && lines[end] !== fence) end++;
    const [lang = '', ...tags] = open[2]!.trim().split(/\s+/);
    out.push({ page, line: start + 1, lang, tags, text: lines.slice(start + 1, end).join('\n') + '\n' });
    i = end;
  }
  return out;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .sort();
}

const where = (ex: Example) => `${ex.page}:${ex.line}`;
const tagged = (ex: Example, tag: string) => ex.tags.includes(tag);
const fileName = (ex: Example) => ex.tags.find((t) => t.startsWith('file='))?.slice('file='.length);

/** Loads a YAML example through the gateway's own loader; returns its problems, formatted. */
function problemsOf(ex: Example): string[] {
  const text = tagged(ex, 'fragment') && !/^routes:/m.test(ex.text) ? BASE_ROUTES + ex.text : ex.text;
  const loaded = loadConfigText(text, fileName(ex) ?? 'example.yaml', EXAMPLE_ENV);
  return loaded.ok ? [] : loaded.problems.map(formatProblem);
}

/** `expected` with `...` as wildcards, as a regular expression over the whole output. */
function outputPattern(expected: string): RegExp {
  if (expected.trim() === '') return /^$/;
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const lines = expected
    .replace(/\n+$/, '')
    .split('\n')
    .map((l) => (l === '...' ? '(?:[^\\n]*\\n)*?' : escape(l).replaceAll('\\.\\.\\.', '.*') + '\\n'));
  return new RegExp(`^${lines.join('')}$`);
}

interface Step {
  readonly command: string;
  readonly expected: string;
}

/** A console block as commands (with `\` continuations) and the output each should print. */
function steps(text: string): Step[] {
  const out: { command: string; expected: string[] }[] = [];
  const lines = text.replace(/\n$/, '').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('$ ')) {
      let command = line.slice(2);
      while (command.endsWith('\\') && i + 1 < lines.length) command = `${command}\n${lines[++i]}`;
      out.push({ command, expected: [] });
    } else {
      assert.ok(out.length > 0, `output before the first "$ " line: ${line}`);
      out.at(-1)!.expected.push(line);
    }
  }
  return out.map((s) => ({ command: s.command, expected: s.expected.map((l) => `${l}\n`).join('') }));
}

const SEPARATOR = '@@docs-example-command-ended@@';

function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', `exec 2>&1\n${script}`], { cwd, env, timeout: 60_000 }, (err, stdout) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, output: stdout });
    });
  });
}

/** The work directory of a page: `portico` on the PATH, and the page's `file=` examples. */
function workDir(examples: readonly Example[]): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(tmpdir(), 'portico-docs-'));
  mkdirSync(join(dir, 'bin'));
  const shim = join(dir, 'bin', 'portico');
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" --import "${TSX}" "${ROOT}src/cli/main.ts" "$@"\n`);
  chmodSync(shim, 0o755);
  for (const ex of examples) {
    const name = fileName(ex);
    if (name !== undefined) writeFileSync(join(dir, name), ex.text);
  }
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${join(dir, 'bin')}:${process.env.PATH ?? ''}` };
  for (const name of ['PORT', 'PORTICO_CONFIG', 'PORTICO_LOG_LEVEL', 'PORTICO_WORKERS', 'JWT_SECRET']) delete env[name];
  return { dir, env };
}

const pages = markdownFiles('docs');
const docsExamples = pages.flatMap(examplesOf);

describe('docs examples', () => {
  it('every shell and YAML fence says how it runs, and every not-run says why', () => {
    for (const ex of docsExamples) {
      const notRun = ex.tags.indexOf('not-run');
      if (notRun !== -1) assert.ok(ex.tags.length > notRun + 1, `${where(ex)}: not-run needs a reason after it`);
      for (const tag of notRun === -1 ? ex.tags : ex.tags.slice(0, notRun))
        assert.ok(KNOWN_TAGS.has(tag) || tag.startsWith('file='), `${where(ex)}: unknown fence tag "${tag}"`);
      if (ex.lang === '') assert.doesNotMatch(ex.text, /^\$ /, `${where(ex)}: a shell session: tag it console`);
    }
  });

  for (const ex of [...docsExamples, ...examplesOf('README.md')].filter((e) => e.lang === 'yaml')) {
    if (tagged(ex, 'not-run')) continue;
    it(`${where(ex)} ${tagged(ex, 'invalid') ? 'is refused' : 'loads'}`, () => {
      const problems = problemsOf(ex);
      if (tagged(ex, 'invalid')) assert.notDeepEqual(problems, [], `${where(ex)} was expected to be invalid`);
      else assert.deepEqual(problems, [], `${where(ex)} does not load`);
    });
  }

  let demo: { gateway: TestGateway; backends: Server[] } | undefined;
  const shellPages = pages.filter((p) => examplesOf(p).some((e) => SHELLS.has(e.lang) && !tagged(e, 'not-run')));
  before(async () => {
    if (!docsExamples.some((e) => SHELLS.has(e.lang) && tagged(e, 'demo') && !tagged(e, 'not-run'))) return;
    const servers = await startDemoBackends({ posts: 0, users: 0, comments: 0, shop: 0, auth: 0, ticker: 0, echo: 0 });
    const env: NodeJS.ProcessEnv = {};
    for (const [name, server] of Object.entries(servers))
      env[`${(name as DemoService).toUpperCase()}_SERVICE`] = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const yaml = readFileSync(join(ROOT, 'examples/demo/gateway.yaml'), 'utf8');
    demo = { gateway: await startGateway(yaml, env), backends: Object.values(servers) };
  });
  after(async () => {
    await demo?.gateway.close();
    for (const s of demo?.backends ?? []) {
      s.closeAllConnections();
      s.close();
    }
  });

  for (const page of shellPages) {
    const examples = examplesOf(page);
    describe(page, () => {
      let work: { dir: string; env: NodeJS.ProcessEnv };
      before(() => {
        work = workDir(examples);
      });
      after(() => rmSync(work.dir, { recursive: true, force: true }));
      for (const ex of examples.filter((e) => SHELLS.has(e.lang) && !tagged(e, 'not-run'))) {
        it(`${where(ex)} runs as shown`, async () => {
          const target = tagged(ex, 'demo') ? `127.0.0.1:${demo!.gateway.port}` : undefined;
          const text = target === undefined ? ex.text : ex.text.replaceAll('localhost:8080', target);
          if (ex.lang !== 'console') {
            const run = await bash(`set -e\n${text}`, work.dir, work.env);
            assert.equal(run.code, 0, `${where(ex)} failed:\n${run.output}`);
            return;
          }
          const session = steps(text);
          // The separator keeps each command's exit status for the next one (`echo $?`).
          const script = session
            .map((s) => `${s.command}\nstatus=$?; printf '\\n${SEPARATOR}\\n'; (exit $status)`)
            .join('\n');
          const run = await bash(script, work.dir, work.env);
          const outputs = run.output.split(`\n${SEPARATOR}\n`);
          session.forEach((s, n) => {
            const actual = `${(outputs[n] ?? '').replace(/\r/g, '').replace(/\n+$/, '')}\n`.replace(/^\n$/, '');
            assert.match(actual, outputPattern(s.expected), `${where(ex)}: $ ${s.command}\nprinted:\n${actual}`);
          });
        });
      }
    });
  }
});
