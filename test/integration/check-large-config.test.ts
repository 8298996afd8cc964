/**
 * `portico check` on configurations far larger than any real one: a value of 10 MB, and 30,000
 * routes. Each is checked by the CLI as a real process, which reports its own CPU time and peak
 * memory at exit (test/support/report-usage.mjs): CPU time rather than the wall clock, so that a
 * busy CI machine does not fail the test, less the CPU time of checking a one-route file (starting
 * node and compiling the sources through tsx, which the built `portico` does not do). The files
 * are generated in a temporary directory.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../support/cli-run.js';

const MB = 1024 * 1024;
/** The bounds of docs/performance.md ("Checking a large configuration"). */
const MAX_CPU_MS = 10_000;
const MAX_RSS_MB = 200;

interface Checked {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly cpuMs: number;
  readonly maxRssMb: number;
}

const usageHook = new URL('../support/report-usage.mjs', import.meta.url).href;

function check(file: string): Promise<Checked> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--import', usageHook, join(ROOT, 'src/cli/main.ts'), 'check', '-c', file],
      { cwd: ROOT, timeout: 120_000, maxBuffer: 64 * MB },
      (err, stdout, stderr) => {
        const line = /portico-usage (\{.*\})\s*$/.exec(stderr);
        if (line === null) return reject(err ?? new Error(`no usage line: ${stderr.slice(-500)}`));
        const usage = JSON.parse(line[1]!) as { cpuMs: number; maxRssMb: number };
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
        resolve({ code, stdout, stderr: stderr.slice(0, line.index), ...usage });
      },
    );
  });
}

let dir: string;
/** CPU time of checking a one-route file: what every run costs before reading its file. */
let baselineCpuMs: number;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'portico-large-'));
  const small = join(dir, 'small.yaml');
  writeFileSync(small, 'routes:\n  - { method: GET, route: /a, service: backend.internal:8080, path: /a }\n');
  const res = await check(small);
  assert.equal(res.code, 0, res.stderr);
  baselineCpuMs = res.cpuMs;
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('portico check on a very large configuration', () => {
  it('a 10 MB value in double quotes: checked within the CPU and memory bounds', async (t) => {
    // Double quotes, with escapes: the form the YAML library decodes slowest.
    const value = `${'x'.repeat(10 * MB)}\\t\\u00e9\\"`;
    const file = join(dir, 'big-value.yaml');
    writeFileSync(
      file,
      `routes:\n  - method: GET\n    route: /a\n    service: backend.internal:8080\n    path: /a\n` +
        `    headers:\n      request:\n        set: { X-Big: "${value}" }\n`,
    );
    const res = await check(file);
    t.diagnostic(`cpu ${res.cpuMs} ms (${baselineCpuMs} ms to start), max RSS ${res.maxRssMb} MB`);
    assert.equal(res.code, 0, res.stderr.slice(0, 2000));
    assert.ok(res.stdout.startsWith(`${file}: ok (1 routes)\n`), res.stdout);
    assert.ok(res.cpuMs - baselineCpuMs < MAX_CPU_MS, `${res.cpuMs} ms of CPU, ${baselineCpuMs} ms to start`);
    assert.ok(res.maxRssMb < MAX_RSS_MB, `${res.maxRssMb} MB`);
  });

  it('30,000 routes: checked within the CPU bound', async (t) => {
    let text = 'config:\n  basePath: /api\nroutes:\n';
    for (let i = 0; i < 30_000; i++)
      text += `  - method: GET\n    route: /r${i}/{id}\n    service: backend${i % 50}.internal:8080\n    path: /items/{id}\n`;
    const file = join(dir, 'many-routes.yaml');
    writeFileSync(file, text);
    const res = await check(file);
    t.diagnostic(`cpu ${res.cpuMs} ms (${baselineCpuMs} ms to start), max RSS ${res.maxRssMb} MB`);
    assert.equal(res.code, 0, res.stderr.slice(0, 2000));
    assert.ok(res.stdout.startsWith(`${file}: ok (30000 routes)\n`), res.stdout);
    assert.ok(res.cpuMs - baselineCpuMs < MAX_CPU_MS, `${res.cpuMs} ms of CPU, ${baselineCpuMs} ms to start`);
  });
});
