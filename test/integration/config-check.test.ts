/**
 * `portico check` and `portico start` on hostile configuration files, as a user runs them: exit 1,
 * one located line per problem, no stack trace, in bounded time and memory (the child runs with
 * a 200 MB old-generation cap). Also the warnings and notes of a valid file (exit 0).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_METRICS_LINE } from '../support/cli-run.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = `${root}src/cli/main.ts`;
// The child runs in a temporary folder, where a bare `tsx` would not resolve.
const tsx = import.meta.resolve('tsx');
/** What parsing and validating a hostile file may add to the CLI's own start-up time. */
const BUDGET_MS = 2_000;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

function portico(args: string[], cwd: string): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.PORT;
  delete env.PORTICO_CONFIG;
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--max-old-space-size=200', '--import', tsx, cli, ...args],
      { cwd, env },
      (err, stdout, stderr) => {
        resolve({
          code: err ? ((err as { code?: number }).code ?? 1) : 0,
          stdout,
          stderr,
          ms: performance.now() - started,
        });
      },
    );
  });
}

function blockMapping(depth: number): string {
  const lines = ['routes: []', 'config:'];
  for (let i = 0; i < depth; i++) lines.push(`${'  '.repeat(i + 1)}k${i}:`);
  return `${lines.join('\n')} 1\n`;
}

function aliasBomb(): string {
  const lines = ['routes: []', 'config:', '  x:', '    a: &a [x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 12; i++)
    lines.push(
      `    a${i}: &a${i} [${Array(9)
        .fill(i === 1 ? '*a' : `*a${i - 1}`)
        .join(', ')}]`,
    );
  return `${lines.join('\n')}\n`;
}

/** Merge keys are plain keys in YAML 1.2, but their aliases still double at every level. */
function mergeBomb(): string {
  const lines = ['routes: []', 'config:', '  m0: &m0 {a: 1, b: 2}'];
  for (let i = 1; i < 30; i++) lines.push(`  m${i}: &m${i}`, `    <<: [*m${i - 1}, *m${i - 1}]`, `    k${i}: 1`);
  return `${lines.join('\n')}\n`;
}

const HOSTILE: { name: string; text: () => string; message: RegExp }[] = [
  {
    name: 'block mapping 3,000 deep',
    text: () => blockMapping(3_000),
    message: /^deep\.yaml:66:129: nesting deeper than 64 levels/,
  },
  {
    name: 'flow list 100,000 deep',
    text: () => `routes: []\nconfig:\n  x: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`,
    message: /^deep\.yaml:3:68: nesting deeper than 64 levels/,
  },
  { name: 'alias bomb', text: aliasBomb, message: /^deep\.yaml:\d+:\d+: aliases expand too much/ },
  { name: 'merge-key bomb', text: mergeBomb, message: /^deep\.yaml:\d+:\d+: aliases expand too much/ },
  {
    name: 'undefined alias',
    text: () => 'routes: []\nconfig:\n  port: *nope\n',
    message: /^deep\.yaml:3:9: alias \*nope names no anchor/,
  },
];

describe('portico check and start on hostile files', () => {
  let dir: string;
  let baseline: number;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'portico-hostile-'));
    writeFileSync(join(dir, 'ok.yaml'), 'routes: []\n');
    // The CLI's own start-up (tsx, imports) on this machine right now: the budget comes on top.
    baseline = (await portico(['check', '--config', 'ok.yaml'], dir)).ms;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const h of HOSTILE) {
    it(`${h.name}: check exits 1 with one located line, in time`, async () => {
      writeFileSync(join(dir, 'deep.yaml'), h.text());
      const r = await portico(['check', '--config', 'deep.yaml'], dir);
      assert.equal(r.code, 1, r.stderr);
      const lines = r.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, h.message);
      assert.doesNotMatch(r.stderr, /\n\s+at |RangeError|heap out of memory/);
      assert.ok(r.ms - baseline < BUDGET_MS, `took ${r.ms.toFixed(0)} ms, ${baseline.toFixed(0)} ms of it start-up`);
    });
  }

  it('start refuses a hostile file the same way', async () => {
    writeFileSync(join(dir, 'deep.yaml'), aliasBomb());
    const r = await portico(['start', '--config', 'deep.yaml', '--port', '0', '--host', '127.0.0.1'], dir);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^deep\.yaml:\d+:\d+: aliases expand too much .*\nportico: refusing to start: 1 problem\(s\) in deep\.yaml\n$/,
    );
  });
});

describe('portico check: warnings and notes of a valid file', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'portico-notes-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const route = 'routes:\n  - method: GET\n    route: /a\n    service: localhost:3000\n    path: /a\n';

  it('warns about a secret shorter than 32 bytes and exits 0', async () => {
    writeFileSync(join(dir, 'g.yaml'), `${route}config:\n  auth:\n    defaultProtected: true\n    secret: tooshort\n`);
    const r = await portico(['check', '--config', 'g.yaml'], dir);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `g.yaml: ok (1 routes)\n${DEFAULT_METRICS_LINE}`);
    assert.equal(
      r.stderr,
      'g.yaml:9:13: warning: config.auth.secret is shorter than 32 bytes (8); tokens signed with it are easier to forge (use 32 random bytes or more, e.g. openssl rand -base64 32)\n',
    );
  });

  it('says what the tainha-gateway timeouts became and exits 0', async () => {
    writeFileSync(
      join(dir, 'g.yaml'),
      `${route}config:\n  readTimeoutSec: 15\n  writeTimeoutSec: 30\n  idleTimeoutSec: 120\n`,
    );
    const r = await portico(['check', '--config', 'g.yaml'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^g\.yaml:7:19: note: config\.readTimeoutSec: 15 -> /m);
    assert.match(r.stderr, /^g\.yaml:8:20: note: config\.writeTimeoutSec: 30 -> /m);
    assert.match(r.stderr, /^g\.yaml:9:19: note: config\.idleTimeoutSec: 120 -> timeouts\.keepAliveSec$/m);
  });
});
