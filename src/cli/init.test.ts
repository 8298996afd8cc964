import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { loadConfig, loadConfigText } from '../config/load.js';
import { formatProblem } from '../config/problems.js';
import { runInit } from './init.js';
import { starterConfig } from './starter-config.js';

describe('portico init', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'portico-init-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a starter that portico check accepts as written, with no notice, and names the next command', () => {
    const target = join(dir, 'gateway.yaml');
    const r = runInit({ config: target, configGiven: true, force: false });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`Next: portico check --config ${target.replace(/[/.]/g, '\\$&')}`));
    const loaded = loadConfig(target, {});
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.problems.map(formatProblem).join('\n'));
    assert.deepEqual(loaded.notices.map(formatProblem), []);
    assert.deepEqual(
      loaded.config.routes.map((r) => [r.method, r.route, r.requiresAuth]),
      [['GET', '/hello', false]],
    );
  });

  it('the $schema line points at the package schema, relative to the written file', () => {
    const target = join(dir, 'gateway.yaml');
    const ref = /^# yaml-language-server: \$schema=(\S+)$/m.exec(readFileSync(target, 'utf8'))?.[1];
    assert.ok(ref !== undefined, 'schema line');
    const schema = resolve(dirname(target), ref);
    assert.ok(existsSync(schema), schema);
    assert.equal(
      (JSON.parse(readFileSync(schema, 'utf8')) as { description?: string }).description,
      'Portico gateway configuration',
    );
  });

  it('refuses to overwrite an existing file without --force, and overwrites with it', () => {
    const target = join(dir, 'mine.yaml');
    writeFileSync(target, 'routes: []\n');
    const refused = runInit({ config: target, configGiven: true, force: false });
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr, `portico: ${target} already exists; nothing written (--force overwrites it)\n`);
    assert.equal(readFileSync(target, 'utf8'), 'routes: []\n');
    const forced = runInit({ config: target, configGiven: true, force: true });
    assert.equal(forced.code, 0);
    assert.match(readFileSync(target, 'utf8'), /written by `portico init`/);
  });

  it('run through npx, the next commands say npx', () => {
    const r = runInit(
      { config: join(dir, 'npx.yaml'), configGiven: false, force: false },
      { npm_lifecycle_event: 'npx' },
    );
    assert.match(r.stdout, /Next: npx portico check {3}then: npx portico start\n$/);
  });

  it('the commented-out examples are valid when switched on: auth and a mapped, protected route', () => {
    const text = starterConfig({ schemaRef: 'x.json', examplesEnabled: true });
    const loaded = loadConfigText(text, 'enabled.yaml', { JWT_SECRET: 'a-secret-of-at-least-32-characters!' });
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.problems.map(formatProblem).join('\n'));
    assert.deepEqual(
      loaded.config.routes.map((r) => [r.route, r.requiresAuth, r.kind]),
      [
        ['/hello', false, 'standard'],
        ['/orders/{id}', true, 'mapping'],
      ],
    );
  });

  it('commenting out is the only difference between the written examples and the valid ones', () => {
    const off = starterConfig({ schemaRef: 'x.json' }).split('\n');
    const on = starterConfig({ schemaRef: 'x.json', examplesEnabled: true }).split('\n');
    assert.equal(off.length, on.length);
    const changed = off.flatMap((line, i) => (line === on[i] ? [] : [[line, on[i]!]]));
    assert.ok(changed.length > 10, 'the examples are there');
    for (const [commented, live] of changed) assert.equal(commented!.replace(/^( *)# /, '$1'), live);
  });
});
