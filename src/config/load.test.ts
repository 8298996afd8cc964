import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, loadConfigInSteps } from './load.js';
import { loadConfigOffThread } from './load-off-thread.js';
import { ROUTES_PER_MESSAGE } from './load-messages.js';
import { turnsDuring } from '../../test/support/event-loop-turns.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-load-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** `count` routes written as a generator writes them: one flow mapping a line. */
function routesFile(count: number, extra = ''): string {
  const lines = ['config:', '  port: 8080', 'routes:'];
  for (let i = 0; i < count; i++)
    lines.push(
      `  - { method: GET, route: "/r${i}/items/{id}", service: "127.0.0.1:9", path: "/r${i}/{id}", public: true, hosts: [t${i}.example.com] }`,
    );
  const file = join(dir, `routes-${count}-${extra.length}.yaml`);
  writeFileSync(file, `${lines.join('\n')}\n${extra}`);
  return file;
}

/** The configuration without its functions (plugins' locators), for a deep comparison. */
const data = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

describe('loadConfigInSteps', () => {
  it('gives what loadConfig gives, for a valid file and for one with problems', async () => {
    const valid = routesFile(50);
    const invalid = routesFile(3, '  - { method: FETCH, route: /x, service: "127.0.0.1:9" }\n');
    for (const file of [valid, invalid]) {
      const inSteps = await loadConfigInSteps(file, {});
      const atOnce = loadConfig(file, {});
      assert.equal(inSteps.ok, atOnce.ok, file);
      assert.deepEqual(data(inSteps), data(atOnce), file);
    }
    const bad = await loadConfigInSteps(invalid, {});
    assert.equal(bad.ok, false);
    if (!bad.ok) assert.ok(bad.problems.some((p) => /"FETCH" is not one of/.test(p.message)));
  });

  it('lets the event loop turn between its steps, where loadConfig holds it throughout', async () => {
    const file = routesFile(500);
    assert.equal(await turnsDuring(() => loadConfig(file, {})), 0);
    assert.ok((await turnsDuring(() => loadConfigInSteps(file, {}))) >= 2);
  });
});

describe('loadConfigOffThread', () => {
  it('gives what loadConfig gives: a valid file, one with problems, ${ENV} values, a missing file', async () => {
    const valid = routesFile(ROUTES_PER_MESSAGE * 2 + 7);
    const invalid = routesFile(3, '  - { method: FETCH, route: /x, service: "127.0.0.1:9" }\n');
    const withEnv = join(dir, 'env.yaml');
    writeFileSync(
      withEnv,
      'config:\n  port: ${PORT:-8080}\nroutes:\n  - { method: GET, route: /a, service: "${HOST}", path: /a, public: true }\n',
    );
    const env = { HOST: '127.0.0.1:9', PORT: '9090' };
    for (const file of [valid, invalid, withEnv, join(dir, 'missing.yaml')]) {
      const offThread = await loadConfigOffThread(file, env);
      const atOnce = loadConfig(file, env);
      assert.equal(offThread.ok, atOnce.ok, file);
      assert.deepEqual(data(offThread), data(atOnce), file);
    }
    const loaded = await loadConfigOffThread(withEnv, env);
    assert.ok(loaded.ok);
    assert.equal(loaded.config.settings.port, 9090);
    assert.equal(loaded.config.routes[0]!.service, '127.0.0.1:9');
  });

  it('locates plugin entries in the file the worker read', async () => {
    const file = join(dir, 'plugins.yaml');
    writeFileSync(
      file,
      'plugins:\n  - name: stamp\n    module: ./stamp.mjs\n    options:\n      header: x-stamp\nroutes:\n  - { method: GET, route: /a, service: "127.0.0.1:9", path: /a, public: true, plugins: [stamp] }\n',
    );
    const offThread = await loadConfigOffThread(file, {});
    const atOnce = loadConfig(file, {});
    assert.ok(offThread.ok && atOnce.ok);
    const [worker, here] = [offThread.config.plugins[0]!, atOnce.config.plugins[0]!];
    assert.deepEqual(worker.locate!(['options', 'header']), here.locate!(['options', 'header']));
    assert.deepEqual(worker.locate!(['options'], 'header'), { line: 5, col: 7 });
  });

  it('holds the event loop only while reading back and compiling slices: it turns throughout', async () => {
    const file = routesFile(ROUTES_PER_MESSAGE * 4);
    let loaded: Awaited<ReturnType<typeof loadConfigOffThread>> | undefined;
    const turns = await turnsDuring(async () => (loaded = await loadConfigOffThread(file, {})));
    assert.ok(loaded?.ok);
    // At least one turn for each message of routes the worker posted, one after the other.
    assert.ok(turns >= 4, `${turns} turns`);
  });

  it('runs the worker at a lower priority than the main thread, and leaves the process as it was', async () => {
    const before = getPriority();
    assert.ok((await loadConfigOffThread(routesFile(3), {})).ok);
    assert.equal(getPriority(), before);
    if (process.platform !== 'linux') return;
    // Field 19 of /proc/<pid>/task/<tid>/stat is the thread's nice value; the worker is kept warm.
    const nices = readdirSync('/proc/self/task').map((tid) =>
      Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]),
    );
    assert.ok(nices.includes(Math.max(before, 10)), `thread nice values ${nices.join(',')}`);
  });
});
