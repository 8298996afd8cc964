/**
 * The V8 tuning of `src/cli/v8-tuning.ts` through the real CLI: what `portico start` applied shows
 * in its `portico listening` line; a flag the operator gives wins; PORTICO_V8_TUNING=off leaves V8
 * alone. The gateway proxies either way.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startPortico } from '../support/cli-process.js';

const ALL = [
  '--no-allocation-site-pretenuring',
  '--heap-growing-percent=30',
  '--no-wasm-loop-unrolling',
  'semi-space cap 4 MB',
];

describe('V8 tuning through the CLI', () => {
  let backend: TestBackend;
  let dir: string;
  let file: string;
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, { url: req.url }));
    dir = mkdtempSync(join(tmpdir(), 'portico-v8-'));
    file = join(dir, 'gateway.yaml');
    writeFileSync(file, `routes:\n  - { method: GET, route: /a, service: ${backend.host}, path: /a }\n`);
  });
  after(async () => {
    await backend?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cases: [string, NodeJS.ProcessEnv, string[]][] = [
    ['applies every setting by default', {}, ALL],
    [
      'leaves the young generation to an operator who sized it in NODE_OPTIONS',
      { NODE_OPTIONS: '--max-semi-space-size=16' },
      ALL.slice(0, 3),
    ],
    ['applies nothing with PORTICO_V8_TUNING=off', { PORTICO_V8_TUNING: 'off' }, []],
  ];
  for (const [title, env, expected] of cases) {
    it(title, async () => {
      const p = await startPortico(['--config', file], env);
      try {
        const listening = p.logs.find((l) => typeof l.msg === 'string' && l.msg.startsWith('portico listening'));
        assert.deepEqual(listening?.v8, expected);
        const res = await request(`${p.url}/api/a`);
        assert.equal(res.statusCode, 200);
        assert.deepEqual(await res.body.json(), { url: '/a' });
      } finally {
        p.child.kill('SIGTERM');
        assert.equal(await p.exited, 0);
      }
    });
  }
});
