/**
 * The security suites (request smuggling, framing, hostile backends, slow clients, tokens, the
 * trust boundary's header strips) pass unchanged with a plugin on every route that implements
 * every stage and changes nothing (docs/plugins.md "The trust boundary"). The suites run in a
 * child process with `PORTICO_TEST_PASSTHROUGH_PLUGIN=1`, which makes every gateway of
 * test/support/gateway.ts add that plugin to each of its routes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { ROOT } from '../support/cli-run.js';

const SUITES = readdirSync(`${ROOT}test/integration`)
  .filter((f) => f.startsWith('campaign-') || f === 'trust-boundary.test.ts')
  .map((f) => `test/integration/${f}`);

describe('the security suites with a pass-through plugin on every route', () => {
  it('finds the suites', () => assert.ok(SUITES.length >= 6, SUITES.join(', ')));

  it('pass unchanged', { timeout: 900_000 }, async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-reporter=dot', ...SUITES],
      {
        cwd: ROOT,
        env: { ...process.env, NODE_TEST_CONTEXT: undefined, PORTICO_TEST_PASSTHROUGH_PLUGIN: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, output.slice(-4000));
  });
});
