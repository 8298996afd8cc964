/**
 * `portico init --plugin NAME`: writes a plugin skeleton and its test next to the configuration
 * file (`plugins/NAME.ts`, `plugins/NAME.test.ts`), both working as written (docs/plugins.md).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { InitResult } from './init.js';

/** A plugin name: what a file name and the configuration's `name` both accept. */
const NAME = /^[a-z][a-z0-9-]*$/;

/** Writes the two files; never replaces one unless `force`. */
export function runInitPlugin(name: string, configFile: string, force: boolean): InitResult {
  if (!NAME.test(name))
    return {
      code: 2,
      stdout: '',
      stderr: `portico: invalid plugin name "${name}": lower-case letters, digits and -, starting with a letter\n`,
    };
  const dir = join(dirname(configFile), 'plugins');
  const files = [
    [join(dir, `${name}.ts`), pluginSource(name)],
    [join(dir, `${name}.test.ts`), testSource(name)],
  ] as const;
  try {
    mkdirSync(dir, { recursive: true });
    for (const [file, text] of files) writeFileSync(file, text, { flag: force ? 'w' : 'wx' });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const path = (err as { path?: string }).path ?? dir;
    return {
      code: 1,
      stdout: '',
      stderr:
        code === 'EEXIST'
          ? `portico: ${path} already exists; nothing more written (--force overwrites it)\n`
          : `portico: cannot write ${path}: ${(err as Error).message}\n`,
    };
  }
  const shown = (file: string) => relative(process.cwd(), file) || file;
  return {
    code: 0,
    stdout:
      `Wrote ${shown(files[0][0])} and its test ${shown(files[1][0])}.\n` +
      `Test it: node --import tsx --test ${shown(files[1][0])}\n` +
      `Use it: add to ${configFile}\n` +
      `  plugins:\n    - name: ${name}\n      module: ./plugins/${name}.ts\n      options: { header: x-${name} }\n` +
      `and list it in a route's plugins: [${name}] (docs/plugins.md)\n`,
    stderr: '',
  };
}

function pluginSource(name: string): string {
  return `/**
 * The ${name} plugin (docs/plugins.md): tells the backend which route it serves, in a header the
 * options name, and refuses requests that send that header themselves.
 */
import { definePlugin, z } from 'portico';

export default definePlugin({
  name: '${name}',
  options: z.object({
    /** The header set on the way to the backend. */
    header: z.string().default('x-${name}'),
  }),

  onRequest({ request, options }) {
    // The header is the gateway's to set: a client that sends its own is refused.
    if (request.header(options.header) !== undefined)
      return Response.json({ error: \`\${options.header} is set by the gateway\` }, { status: 400 });
  },

  beforeUpstream({ request, options, upstream }) {
    upstream.setHeader(options.header, request.routeId);
  },
});
`;
}

function testSource(name: string): string {
  return `// The ${name} plugin against a real gateway and a real backend, in-process (docs/plugins.md).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { testPlugin, type PluginUnderTest } from 'portico/testing';

describe('${name}', () => {
  let t: PluginUnderTest;
  before(async () => {
    t = await testPlugin({
      plugin: fileURLToPath(new URL('./${name}.ts', import.meta.url)),
      options: { header: 'x-${name}' },
    });
  });
  after(() => t.close());

  it('tells the backend the route', async () => {
    const res = await fetch(\`\${t.url}/hello\`);
    assert.equal(res.status, 200);
    assert.equal(t.requests.at(-1)?.headers['x-${name}'], 'GET /hello');
  });

  it('refuses a client that sends the header itself', async () => {
    const res = await fetch(\`\${t.url}/hello\`, { headers: { 'x-${name}': 'forged' } });
    assert.equal(res.status, 400);
  });
});
`;
}
