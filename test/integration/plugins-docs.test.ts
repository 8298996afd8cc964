/**
 * docs/plugins.md is executed: its plugin listings are the files of examples/plugins/ (run by
 * test/integration/plugins.test.ts), its testing example runs and passes, its configuration
 * loads with its plugins, its `portico check` output is the golden file's, and its request-body
 * and embedding examples run against a real gateway.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfigText } from '../../src/config/load.js';
import { formatProblem } from '../../src/config/problems.js';
import { loadPlugins } from '../../src/plugins/load.js';
import { testPlugin } from '../../src/testing.js';
import { ROOT, runPortico } from '../support/cli-run.js';
import { json, startBackend } from '../support/backend.js';
import { startGateway } from '../support/gateway.js';

const doc = readFileSync(join(ROOT, 'docs/plugins.md'), 'utf8');
const blocks = (lang: string) =>
  [...doc.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
const section = (title: string) =>
  doc.slice(doc.indexOf(`## ${title}\n`), doc.indexOf('\n## ', doc.indexOf(`## ${title}\n`) + 3));
const scratch = join(ROOT, '.tmp', `plugins-docs-${process.pid}`);

describe('docs/plugins.md', () => {
  after(() => rmSync(scratch, { recursive: true, force: true }));

  for (const file of ['api-key.ts', 'response-headers.ts', 'json-redact.ts', 'api-key.test.ts'])
    it(`shows examples/plugins/${file} as it is`, () => {
      const text = readFileSync(join(ROOT, 'examples/plugins', file), 'utf8');
      assert.ok(blocks('ts').includes(text), `docs/plugins.md has no ts block equal to examples/plugins/${file}`);
    });

  it('its testing example passes', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', 'examples/plugins/api-key.test.ts'], {
      cwd: ROOT,
      // Without the parent's test context, the child runs its tests as `node --test` does.
      env: { ...process.env, NODE_TEST_CONTEXT: undefined },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    assert.equal(await new Promise((resolve) => child.on('close', resolve)), 0, output);
    assert.match(output, /# pass 3/);
  });

  it('its configuration loads, with its plugins', async () => {
    const yaml = /```yaml\n([\s\S]*?)```/.exec(section('Configure it'))![1]!;
    const loaded = loadConfigText(yaml, join(ROOT, 'gateway.yaml'), { ORDERS_KEY: 'k-0123456789abcdef' });
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.problems.map(formatProblem).join('\n'));
    const plugins = await loadPlugins(loaded.config);
    assert.ok(plugins.ok, plugins.ok ? '' : plugins.problems.map(formatProblem).join('\n'));
    assert.deepEqual([...plugins.plugins.keys()], ['api-key', 'headers']);
    assert.deepEqual(loaded.config.routes[0]!.plugins, ['headers', 'api-key']);
  });

  it("its portico check output is the golden file's", () => {
    const shown = /```text\n([\s\S]*?)```/.exec(section('Configure it'))![1]!.trim().split('\n');
    const golden = readFileSync(join(ROOT, 'test/fixtures/check/plugin-options.stderr'), 'utf8');
    for (const line of shown) assert.ok(golden.includes(line.replace('gateway.yaml', 'plugin-options.yaml')), line);
  });

  it('its request-body example reads the body of a buffered request', async () => {
    mkdirSync(scratch, { recursive: true });
    const code =
      /```ts\n(import \{ definePlugin \} from 'portico';\n\nexport default definePlugin\(\{\n {2}capabilities[\s\S]*?)```/.exec(
        doc,
      )![1]!;
    writeFileSync(join(scratch, 'body.ts'), code.replace("from 'portico'", `from '${join(ROOT, 'src/index.ts')}'`));
    const t = await testPlugin({ plugin: join(scratch, 'body.ts') });
    try {
      const refused = await fetch(`${t.url}/hello`, { method: 'POST', body: "x'; DROP TABLE users" });
      assert.equal(refused.status, 400);
      assert.equal(refused.headers.get('x-portico-error'), 'GW_REQUEST_INVALID');
      const passed = await fetch(`${t.url}/hello`, { method: 'POST', body: 'hello' });
      assert.equal(passed.status, 200);
      assert.equal(t.requests.at(-1)!.body, 'hello');
    } finally {
      await t.close();
    }
  });

  it('portico init --plugin writes a plugin and a test that pass as written, and never overwrites', async () => {
    const project = join(scratch, 'init');
    mkdirSync(project, { recursive: true });
    const init = await runPortico(['init', '--plugin', 'audit', '--config', 'gateway.yaml'], { cwd: project });
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, /^Wrote plugins\/audit\.ts and its test plugins\/audit\.test\.ts\.\n/);
    const again = await runPortico(['init', '--plugin', 'audit'], { cwd: project });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists; nothing more written \(--force overwrites it\)/);
    assert.equal((await runPortico(['init', '--plugin', 'Bad Name'], { cwd: project })).code, 2);
    // The generated test, run as the printed command says (from the checkout, where 'portico' resolves).
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', join(project, 'plugins/audit.test.ts')], {
      cwd: ROOT,
      env: { ...process.env, NODE_TEST_CONTEXT: undefined },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    assert.equal(await new Promise((resolve) => child.on('close', resolve)), 0, output);
    assert.match(output, /# pass 2/);
  });

  it('its embedding example serves the configuration with its plugins', async () => {
    const backend = await startBackend();
    mkdirSync(scratch, { recursive: true });
    writeFileSync(
      join(scratch, 'gateway.yaml'),
      `plugins:\n  - { name: h, module: ${join(ROOT, 'examples/plugins/response-headers.ts')}, options: { set: { x-embedded: 'yes' } } }\n` +
        `routes:\n  - { method: GET, route: /e, service: ${backend.host}, path: /e, plugins: [h] }\n`,
    );
    const code = /```ts\n(import \{ createGateway, formatProblem, loadConfigWithPlugins \}[\s\S]*?)```/.exec(doc)![1]!;
    const module = join(scratch, 'embed.ts');
    writeFileSync(
      module,
      code
        .replace("from 'portico'", `from '${join(ROOT, 'src/index.ts')}'`)
        .replace("'gateway.yaml'", JSON.stringify(join(scratch, 'gateway.yaml'))) + 'export { gateway };\n',
    );
    const { gateway } = (await import(module)) as { gateway: import('../../src/gateway.js').Gateway };
    try {
      const { port } = await gateway.listen(0, '127.0.0.1');
      const res = await fetch(`http://127.0.0.1:${port}/api/e`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-embedded'), 'yes');
    } finally {
      await gateway.close();
      await backend.close();
    }
  });

  it('its setTarget example sends the call to the named upstream it chooses', async () => {
    const usual = await startBackend((_req, res) => json(res, 200, { from: 'usual' }));
    const canary = await startBackend((_req, res) => json(res, 200, { from: 'canary' }));
    mkdirSync(scratch, { recursive: true });
    const code = /```ts\n([\s\S]*?)```/.exec(section('Choosing the backend'))![1]!;
    writeFileSync(join(scratch, 'canary.ts'), code.replace("from 'portico'", `from '${join(ROOT, 'src/index.ts')}'`));
    const gw = await startGateway(
      `plugins:\n  - { name: canary, module: ${join(scratch, 'canary.ts')} }\n` +
        `upstreams:\n  orders-canary: { targets: ["${canary.host}"] }\n` +
        `routes:\n  - { method: GET, route: /o, service: ${usual.host}, path: /o, plugins: [canary] }\n`,
    );
    try {
      assert.deepEqual(await (await fetch(`${gw.url}/api/o`)).json(), { from: 'usual' });
      assert.deepEqual(await (await fetch(`${gw.url}/api/o`, { headers: { 'x-canary': '1' } })).json(), {
        from: 'canary',
      });
    } finally {
      await gw.close();
      await usual.close();
      await canary.close();
    }
  });

  it('its JSON-transform configuration loads, with the example plugin', async () => {
    const yaml = /```yaml fragment\n([\s\S]*?)```/.exec(section('Transforming a JSON response'))![1]!;
    const routes = 'routes:\n  - { method: GET, route: /u, service: "127.0.0.1:1", path: /u, plugins: [redact] }\n';
    const loaded = loadConfigText(yaml + routes, join(ROOT, 'gateway.yaml'), {});
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.problems.map(formatProblem).join('\n'));
    const plugins = await loadPlugins(loaded.config);
    assert.ok(plugins.ok, plugins.ok ? '' : plugins.problems.map(formatProblem).join('\n'));
    assert.deepEqual(plugins.plugins.get('redact')!.options, { remove: ['password'] });
  });
});
