/**
 * The `npm test` reporter (scripts/test-reporter.mjs) on fixture test files: one line per file, every
 * failure in full with its file and line, a last line `N passed, N failed`, and the runner's exit
 * code unchanged (non-zero when anything failed).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = 'test/fixtures/reporter/';

function runTests(files: string[]): Promise<{ code: number; stdout: string }> {
  // Without this, the inner runner would report to this test run instead of to its reporter.
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        '--test',
        '--test-concurrency=2',
        '--test-reporter=./scripts/test-reporter.mjs',
        ...files.map((f) => fixtures + f),
      ],
      { cwd: root, env, timeout: 30_000 },
      (err, stdout) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout });
      },
    );
  });
}

describe('npm test reporter', () => {
  it('all green: one line per file, the totals, exit 0', async () => {
    const r = await runTests(['green.fixture.mjs']);
    assert.equal(r.code, 0);
    assert.match(
      r.stdout,
      /^ok {3}test\/fixtures\/reporter\/green\.fixture\.mjs {2}2 passed {2}\d+\.\ds\n\n2 passed, 0 failed\n$/,
    );
  });

  it('skips: counted on the file line, and each listed with its reason before the totals', async () => {
    const r = await runTests(['skip.fixture.mjs']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^ok {3}test\/fixtures\/reporter\/skip\.fixture\.mjs {2}1 passed, 1 skipped {2}\d+\.\ds\n/);
    assert.match(
      r.stdout,
      /\nSkipped:\n {2}test\/fixtures\/reporter\/skip\.fixture\.mjs:5:1 {2}in a browser: no Chromium at \/usr\/bin\/chromium\n/,
    );
    assert.match(r.stdout, /\n1 passed, 0 failed\n$/);
  });

  it('failures: each file once, every failure in full with file:line, totals last, exit 1', async () => {
    const r = await runTests(['mixed.fixture.mjs', 'hook.fixture.mjs', 'crash.fixture.mjs', 'green.fixture.mjs']);
    assert.equal(r.code, 1);
    const lines = r.stdout.split('\n');
    const fileLines = lines.filter((l) => /^(ok {3}|FAIL )test\/fixtures/.test(l));
    assert.deepEqual(
      fileLines.map((l) => l.replace(/ {2}\d+\.\ds$/, '')),
      // The runner orders files by name.
      [
        'FAIL test/fixtures/reporter/crash.fixture.mjs  0 passed',
        'ok   test/fixtures/reporter/green.fixture.mjs  2 passed',
        'FAIL test/fixtures/reporter/hook.fixture.mjs  0 passed, 3 failed',
        'FAIL test/fixtures/reporter/mixed.fixture.mjs  2 passed, 1 failed',
      ],
    );
    // The assertion's own diff and where it failed.
    assert.match(
      r.stdout,
      /FAILURE \d\/3: test\/fixtures\/reporter\/mixed\.fixture\.mjs:8:3\n {2}orders > compares totals\n/,
    );
    assert.match(r.stdout, /\+ {3}total: 3\n- {3}total: 4/);
    assert.match(r.stdout, /mixed\.fixture\.mjs:8:\d+\)/, 'the stack points into the test file');
    // A failed hook is printed once; the tests it cancelled are only counted.
    assert.match(
      r.stdout,
      /hook\.fixture\.mjs:4:1\n {2}needs a database\n\nError: cannot connect to the fixture database/,
    );
    assert.match(r.stdout, /\(2 more test\(s\) failed because a hook or parent above failed/);
    // A file that throws while loading shows what it printed (the thrown error).
    assert.match(
      r.stdout,
      /crash\.fixture\.mjs:1:1\n {2}\(the file itself: it failed outside any test\)[\s\S]*\| Error: thrown while the file loads/,
    );
    // The failures again, one line each, just above the totals (what `npm test | tail` shows).
    const list = lines.indexOf('Failed:');
    assert.ok(list > 0, r.stdout);
    assert.deepEqual(
      lines.slice(list + 1, list + 4).map((l) => l.replace(/:\d+:\d+ .*$/, '')),
      [
        '  test/fixtures/reporter/crash.fixture.mjs',
        '  test/fixtures/reporter/hook.fixture.mjs',
        '  test/fixtures/reporter/mixed.fixture.mjs',
      ].sort(),
    );
    assert.equal(lines.at(-2), '4 passed, 5 failed');
    assert.equal(lines.at(-1), '');
  });
});
