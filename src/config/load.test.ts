import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, loadConfigInSteps } from './load.js';

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
    const turnsDuring = async (load: () => unknown): Promise<number> => {
      let turns = 0;
      let done = false;
      const tick = () => {
        if (done) return;
        turns++;
        setImmediate(tick);
      };
      setImmediate(tick);
      await load();
      done = true;
      return turns;
    };
    assert.equal(await turnsDuring(() => loadConfig(file, {})), 0);
    assert.ok((await turnsDuring(() => loadConfigInSteps(file, {}))) >= 2);
  });
});
