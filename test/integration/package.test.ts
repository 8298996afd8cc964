/**
 * The npm package as a user gets it, and signals however the gateway is started.
 *
 * `npm pack` (prepack builds), the tarball installed with `npm install --omit=dev` into an
 * empty directory, then the installed `portico`: --version, init, check, start against a local
 * backend, the library import with its TypeScript declarations, the README's links, and the
 * library example of docs/deploy.md in an ES module project and in a CommonJS one (`npm init -y`). Then SIGTERM and SIGINT sent to
 * the process a supervisor would have started, for every way of starting: the installed bin,
 * `npx portico start`, `node dist/src/cli/main.js start` and `npm start` (the demo). Each must
 * drain (an in-flight request still gets its answer) and stop, leaving nothing serving.
 *
 * Needs the npm registry for the package's dependencies (npm's cache makes it quick).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startBackend, type TestBackend } from '../support/backend.js';
import { DEFAULT_METRICS_LINE } from '../support/cli-run.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { name: string; version: string };
/** Generous bounds for npm itself (pack builds, install may fetch); every wait below is bounded. */
const NPM_MS = 240_000;
const START_MS = 60_000;

/** The environment a supervisor gives: none of the npm variables of the `npm test` running us. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('npm_')) env[k] = v;
  return { ...env, PORTICO_LOG_LEVEL: 'info', ...extra };
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)),
  );
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

interface Launched {
  readonly child: ChildProcess;
  readonly logs: Record<string, unknown>[];
  stderr(): string;
  /** The gateway's port, from its "portico listening" line. */
  readonly port: Promise<number>;
  /** The launched process's own exit. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Every process holding the output pipe has exited (the gateway included, orphaned or not). */
  readonly outputClosed: Promise<void>;
  waitForLog(test: (line: Record<string, unknown>) => boolean, what: string): Promise<void>;
}

/** `group`: the process leads a process group of its own, as a terminal's foreground job does. */
function launch(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; group?: boolean },
): Launched {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.group ?? false,
  });
  const logs: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (!line.startsWith('{')) return;
    try {
      logs.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      return;
    }
    for (const w of [...waiters]) w();
  });
  const outputClosed = new Promise<void>((resolve) => child.stdout!.on('close', () => resolve()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitForLog = (test: (line: Record<string, unknown>) => boolean, what: string) =>
    within(
      new Promise<void>((resolve) => {
        const check = () => {
          if (!logs.some(test)) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      }),
      START_MS,
      `${what} (stderr: ${stderr})`,
    );
  const listening = (l: Record<string, unknown>) => typeof l.msg === 'string' && l.msg.startsWith('portico listening');
  const port = waitForLog(listening, 'portico listening').then(() => Number(logs.find(listening)!.port));
  return { child, logs, stderr: () => stderr, port, exited, outputClosed, waitForLog };
}

/** True when something accepts connections on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

const isDraining = (l: Record<string, unknown>) => l.msg === 'draining: finishing in-flight requests';
const isStopped = (l: Record<string, unknown>) => l.msg === 'stopped';

/** A backend whose /slow requests wait until the test releases them: a request kept in flight. */
async function startHoldingBackend(): Promise<{ backend: TestBackend; held: Promise<void>; release(): void }> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let arrived!: () => void;
  const held = new Promise<void>((r) => (arrived = r));
  const backend = await startBackend(async (req, res) => {
    if (req.url?.startsWith('/slow')) {
      arrived();
      await released;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ backend: 'ok', url: req.url }));
  });
  return { backend, held, release };
}

/**
 * Starts the gateway one way, sends `signal` to the launched process (to its whole process group
 * with `toGroup`, as a terminal's Ctrl-C does) while a request is in flight, and checks the drain:
 * the request is answered, the gateway logs that it stopped, and nothing listens on its port any
 * more. Returns the launched process's exit.
 */
async function signalDuringRequest(
  start: (serviceHost: string) => Launched,
  signal: NodeJS.Signals,
  routePath: string,
  toGroup = false,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const { backend, held, release } = await startHoldingBackend();
  const launched = start(backend.host);
  try {
    const port = await launched.port;
    const inFlight = fetch(`http://127.0.0.1:${port}${routePath}`);
    await within(held, START_MS, 'the request reached the backend');
    if (toGroup) process.kill(-launched.child.pid!, signal);
    else launched.child.kill(signal);
    await launched.waitForLog(isDraining, 'the gateway drains');
    release();
    const res = await within(inFlight, START_MS, 'in-flight answer');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { backend: 'ok', url: '/slow' });
    await launched.waitForLog(isStopped, 'the gateway stopped');
    await within(launched.outputClosed, START_MS, 'every process holding the output exits');
    assert.equal(await accepts(port), false, 'nothing serves the port after the stop');
    return await within(launched.exited, START_MS, 'the launched process exits');
  } finally {
    release();
    if (launched.child.exitCode === null && launched.child.signalCode === null) launched.child.kill('SIGKILL');
    await backend.close();
  }
}

/** A strict NodeNext tsconfig for one file of a test project, with the checkout's Node types. */
const tsconfigFor = (file: string, emit: boolean) =>
  JSON.stringify({
    compilerOptions: {
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      target: 'ES2022',
      strict: true,
      ...(emit ? {} : { noEmit: true }),
      skipLibCheck: true,
      types: ['node'],
      typeRoots: [join(repo, 'node_modules', '@types')],
    },
    files: [file],
  });

const slowRoute = (host: string) =>
  `routes:\n  - { method: GET, route: /slow, service: ${host}, path: /slow, public: true }\n`;

describe('the npm package, installed from its tarball', () => {
  let dir: string;
  let app: string;
  let tarball: string;
  let bin: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'portico-package-'));
    const packed = await run('npm', ['pack', '--silent', '--pack-destination', dir], {
      cwd: repo,
      timeout: NPM_MS,
      maxBuffer: 16 << 20,
    });
    tarball = join(dir, packed.stdout.trim().split('\n').pop()!);
    app = join(dir, 'app');
    await run('mkdir', [app]);
    writeFileSync(join(app, 'package.json'), '{ "name": "portico-package-test", "private": true, "type": "module" }\n');
    await run('npm', ['install', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', '--silent', tarball], {
      cwd: app,
      timeout: NPM_MS,
    });
    bin = join(app, 'node_modules', '.bin', 'portico');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('ships what runs and what the README links to: dist, schema, README, LICENSE, CHANGELOG, CONTRIBUTING, docs, bench results; no source maps, tests or sources', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball], { maxBuffer: 16 << 20 });
    const files = stdout
      .trim()
      .split('\n')
      .map((f) => f.replace(/^package\//, ''));
    for (const f of [
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'schema/portico.schema.json',
      'dist/src/cli/main.js',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      // The status page is compiled in (docs/dashboard.md): no asset file to forget.
      'dist/src/admin/page-files.generated.js',
    ]) {
      assert.ok(files.includes(f), `${f} is shipped`);
    }
    const unexpected = files.filter(
      (f) =>
        !/^(package\.json|README\.md|LICENSE|CHANGELOG\.md|CONTRIBUTING\.md|schema\/[^/]+\.json|dist\/src\/.+\.(js|d\.ts)|(docs|bench\/results)\/.+\.md)$/.test(
          f,
        ) || /\.test\.(js|d\.ts)$/.test(f),
    );
    assert.deepEqual(unexpected, []);
    // An incremental build never deletes the output of a removed source: such leftovers would ship.
    const stale = files.filter(
      (f) =>
        f.startsWith('dist/src/') &&
        f.endsWith('.js') &&
        !existsSync(join(repo, f.replace(/^dist\//, '').replace(/\.js$/, '.ts'))),
    );
    assert.deepEqual(stale, [], 'compiled files without a source (rm -rf dist, then pack again)');
  });

  it('every relative link of the README resolves to a file in the tarball', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball], { maxBuffer: 16 << 20 });
    const files = new Set(
      stdout
        .trim()
        .split('\n')
        .map((f) => f.replace(/^package\//, '')),
    );
    const readme = readFileSync(join(app, 'node_modules', pkg.name, 'README.md'), 'utf8');
    const targets = [...readme.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1]!.replace(/#.*$/, ''))
      .filter((t) => t !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(t));
    assert.ok(targets.length > 30, `${targets.length} relative links`);
    assert.deepEqual(
      targets.filter((t) => !files.has(t.replace(/^\.\//, ''))),
      [],
      'README links to files the tarball does not ship',
    );
  });

  it('the library example of docs/deploy.md compiles and runs in an ES module project and in an npm init -y one', async () => {
    const doc = readFileSync(join(repo, 'docs', 'deploy.md'), 'utf8');
    const example = /### As a library\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(doc)?.[1];
    assert.ok(example, 'docs/deploy.md has a ts block under "As a library"');
    const cjs = join(app, 'cjs');
    await run('mkdir', [cjs]);
    await run('npm', ['init', '-y'], { cwd: cjs, env: cleanEnv(), timeout: START_MS });
    // The ES module project is `app` ("type": "module"); `cjs` inside it resolves the same install.
    for (const project of [app, cjs]) {
      writeFileSync(join(project, 'example.ts'), example.replace("'0.0.0.0'", "'127.0.0.1'"));
      writeFileSync(join(project, 'gateway.yaml'), 'routes: []\n');
      writeFileSync(join(project, 'tsconfig.example.json'), tsconfigFor('example.ts', true));
      await run(
        process.execPath,
        [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.example.json'],
        { cwd: project, timeout: START_MS },
      ).catch((err: { stdout?: string }) => assert.fail(`tsc in ${project}: ${err.stdout ?? String(err)}`));
      const child = spawn(process.execPath, ['example.js'], {
        cwd: project,
        env: cleanEnv({ PORT: '0' }),
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      try {
        const lines = createInterface({ input: child.stdout! });
        const listening = new Promise<number>((resolve) =>
          lines.on('line', (line) => {
            const port = /^portico listening on (\d+)$/.exec(line)?.[1];
            if (port !== undefined) resolve(Number(port));
          }),
        );
        const port = await within(listening, START_MS, `the example listens (${project})`);
        assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);
      } finally {
        child.kill('SIGKILL');
        // The project is shared with the tests below: `portico init` there writes its own.
        rmSync(join(project, 'gateway.yaml'), { force: true });
      }
    }
    assert.equal(JSON.parse(readFileSync(join(cjs, 'package.json'), 'utf8')).type ?? 'commonjs', 'commonjs');
  });

  it('portico --version prints the package version', async () => {
    const { stdout } = await run(bin, ['--version'], { cwd: app, env: cleanEnv() });
    assert.equal(stdout, `portico ${pkg.version}\n`);
  });

  it('portico check accepts a sample file and rejects a broken one', async () => {
    writeFileSync(join(app, 'sample.yaml'), slowRoute('localhost:3000'));
    const ok = await run(bin, ['check', '--config', 'sample.yaml'], { cwd: app, env: cleanEnv() });
    assert.equal(ok.stdout, `sample.yaml: ok (1 routes)\n${DEFAULT_METRICS_LINE}`);
    writeFileSync(join(app, 'broken.yaml'), 'routes:\n  - { method: GET, route: /x, service: localhost:3000 }\n');
    await assert.rejects(
      run(bin, ['check', '--config', 'broken.yaml'], { cwd: app, env: cleanEnv() }),
      (err: { code?: number; stderr?: string }) => {
        assert.equal(err.code, 1);
        assert.match(err.stderr ?? '', /^broken\.yaml:2:\d+: /);
        return true;
      },
    );
  });

  it('npx portico init && npx portico check && npx portico start serves a request', async () => {
    const backend = await startBackend();
    const env = cleanEnv({ BACKEND_URL: backend.url });
    try {
      const init = await run('npx', ['portico', 'init'], { cwd: app, env, timeout: START_MS });
      assert.match(init.stdout, /^Wrote gateway\.yaml: .*\nNext: npx portico check {3}then: npx portico start\n$/);
      const check = await run('npx', ['portico', 'check'], { cwd: app, env, timeout: START_MS });
      assert.equal(check.stdout, `gateway.yaml: ok (1 routes)\n${DEFAULT_METRICS_LINE}`);
      await assert.rejects(
        run('npx', ['portico', 'init'], { cwd: app, env, timeout: START_MS }),
        /already exists; nothing written \(--force overwrites it\)/,
      );
      const gw = launch(bin, ['start', '--port', '0', '--host', '127.0.0.1'], { cwd: app, env });
      try {
        const port = await gw.port;
        const res = await fetch(`http://127.0.0.1:${port}/api/hello`);
        assert.equal(res.status, 200);
        assert.deepEqual(await res.json(), { ok: true });
        assert.equal(backend.seen.at(-1)?.url, '/hello');
        gw.child.kill('SIGTERM');
        assert.deepEqual(await within(gw.exited, START_MS, 'exit after SIGTERM'), { code: 0, signal: null });
      } finally {
        if (gw.child.exitCode === null) gw.child.kill('SIGKILL');
      }
    } finally {
      await backend.close();
    }
  });

  it("import { createGateway } from 'portico' works, with TypeScript declarations", async () => {
    const code = [
      "import { createGateway, formatProblem, loadConfigText } from 'portico';",
      "const loaded = loadConfigText('routes: []\\n', 'embedded.yaml', {});",
      "if (!loaded.ok) throw new Error(loaded.problems.map(formatProblem).join('\\n'));",
      'const gateway = createGateway({ config: loaded.config, drainTimeoutMs: 1000 });',
      "const address = await gateway.listen(0, '127.0.0.1');",
      'const res = await fetch(`http://127.0.0.1:${address.port}/health`);',
      'const port: number = address.port;',
      'console.log(res.status, typeof port);',
      'await gateway.close();',
      '',
    ].join('\n');
    writeFileSync(join(app, 'embed.ts'), code);
    writeFileSync(join(app, 'embed.mjs'), code.replace(': number', ''));
    writeFileSync(join(app, 'tsconfig.json'), tsconfigFor('embed.ts', false));
    // Without declarations, strict TypeScript refuses the import (TS7016), so this fails then.
    await run(process.execPath, [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
      cwd: app,
      timeout: START_MS,
    }).catch((err: { stdout?: string }) => {
      assert.fail(`tsc: ${err.stdout ?? String(err)}`);
    });
    const { stdout } = await run(process.execPath, ['embed.mjs'], { cwd: app, env: cleanEnv(), timeout: START_MS });
    // The answer, then the gateway's own log lines (its close says "stopped accepting").
    assert.equal(stdout.split('\n')[0], '200 number');
  });

  it('a plugin published as a package: packed, installed next to portico, typed, checked, served and tested with portico/testing', async () => {
    // The plugin package, as its author publishes it (docs/plugins.md "Publishing a plugin").
    const source = join(dir, 'portico-plugin-hello');
    await run('mkdir', [source]);
    writeFileSync(
      join(source, 'package.json'),
      JSON.stringify({ name: 'portico-plugin-hello', version: '1.0.0', type: 'module', exports: './index.js' }),
    );
    writeFileSync(
      join(source, 'index.js'),
      [
        "import { definePlugin, z } from 'portico';",
        'export default definePlugin({',
        "  options: z.object({ greeting: z.string().default('hello') }),",
        "  onResponse({ response, options }) { response.setHeader('x-greeting', options.greeting); },",
        '});',
        '',
      ].join('\n'),
    );
    const packed = await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: source, timeout: NPM_MS });
    const plugin = join(dir, packed.stdout.trim().split('\n').pop()!);
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--silent', plugin], {
      cwd: app,
      timeout: NPM_MS,
    });
    const backend = await startBackend();
    const env = cleanEnv();
    try {
      const yaml = (options: string) =>
        `plugins:\n  - { name: hello, module: portico-plugin-hello, options: ${options} }\n` +
        `routes:\n  - { method: GET, route: /hi, service: ${backend.host}, path: /hi, plugins: [hello] }\n`;
      writeFileSync(join(app, 'plugin-bad.yaml'), yaml('{ greting: hi }'));
      await assert.rejects(
        run(bin, ['check', '--config', 'plugin-bad.yaml'], { cwd: app, env }),
        (err: { stderr?: string }) => {
          assert.equal(
            err.stderr,
            'plugin-bad.yaml:2:61: plugins[0].options: unknown key "greting" (did you mean "greeting"?)\n',
          );
          return true;
        },
      );
      writeFileSync(join(app, 'plugin.yaml'), yaml('{ greeting: hi }'));
      const check = await run(bin, ['check', '--config', 'plugin.yaml'], { cwd: app, env });
      assert.match(check.stdout, /^plugin\.yaml: ok \(1 routes\)/);
      const gw = launch(bin, ['start', '--config', 'plugin.yaml', '--port', '0', '--host', '127.0.0.1'], {
        cwd: app,
        env,
      });
      try {
        const res = await fetch(`http://127.0.0.1:${await gw.port}/api/hi`);
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('x-greeting'), 'hi');
      } finally {
        gw.child.kill('SIGKILL');
      }
    } finally {
      await backend.close();
    }
    // The testing helper, as the plugin's own tests use it.
    writeFileSync(
      join(app, 'plugin-test.mjs'),
      [
        "import { testPlugin } from 'portico/testing';",
        "const t = await testPlugin({ plugin: 'portico-plugin-hello', options: { greeting: 'hey' } });",
        'const res = await fetch(`${t.url}/hello`);',
        "console.log(res.status, res.headers.get('x-greeting'), t.requests.length);",
        'await t.close();',
        '',
      ].join('\n'),
    );
    const tested = await run(process.execPath, ['plugin-test.mjs'], { cwd: app, env: cleanEnv(), timeout: START_MS });
    assert.equal(tested.stdout, '200 hey 1\n');
    // Full types: the options are the schema's output, and a misspelt one does not compile.
    writeFileSync(
      join(app, 'typed-plugin.ts'),
      [
        "import { definePlugin, z } from 'portico';",
        'export default definePlugin({',
        "  options: z.object({ header: z.string().default('x-key'), keys: z.array(z.string()) }),",
        '  onRequest({ request, options }) {',
        '    const header: string = options.header;',
        '    // @ts-expect-error: no such option',
        '    void options.heder;',
        "    if (!options.keys.includes(request.header(header) ?? '')) return { error: 'GW_AUTH_INVALID' };",
        '  },',
        '});',
        '',
      ].join('\n'),
    );
    writeFileSync(join(app, 'tsconfig.plugin.json'), tsconfigFor('typed-plugin.ts', false));
    await run(
      process.execPath,
      [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.plugin.json'],
      {
        cwd: app,
        timeout: START_MS,
      },
    ).catch((err: { stdout?: string }) => assert.fail(`tsc: ${err.stdout ?? String(err)}`));
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`the installed bin: ${signal} drains and exits 0`, async () => {
      writeFileSync(join(app, 'slow.yaml'), '');
      const exit = await signalDuringRequest(
        (host) => {
          writeFileSync(join(app, 'slow.yaml'), slowRoute(host));
          return launch(bin, ['start', '--config', 'slow.yaml', '--port', '0', '--host', '127.0.0.1'], {
            cwd: app,
            env: cleanEnv(),
          });
        },
        signal,
        '/api/slow',
      );
      assert.deepEqual(exit, { code: 0, signal: null });
    });
  }

  // npm runs the command through `sh -c`, and that shell passes no signal on: the gateway notices
  // its parents go (SIGTERM kills the shell; SIGKILL kills npm), and a terminal's Ctrl-C reaches
  // it with the rest of the foreground group. npx's own exit follows npm's rule (it ends by the
  // signal); what matters is that the gateway drained, stopped and left nothing serving.
  const npxCases: { name: string; signal: NodeJS.Signals; toGroup: boolean }[] = [
    { name: 'SIGTERM to npx', signal: 'SIGTERM', toGroup: false },
    { name: 'SIGKILL to npx (a supervisor giving up)', signal: 'SIGKILL', toGroup: false },
    { name: 'SIGINT to its process group (Ctrl-C)', signal: 'SIGINT', toGroup: true },
  ];
  for (const c of npxCases) {
    it(`npx portico start: ${c.name} drains and stops the gateway`, async () => {
      await signalDuringRequest(
        (host) => {
          writeFileSync(join(app, 'slow.yaml'), slowRoute(host));
          return launch('npx', ['portico', 'start', '--config', 'slow.yaml', '--port', '0', '--host', '127.0.0.1'], {
            cwd: app,
            env: cleanEnv(),
            group: c.toGroup,
          });
        },
        c.signal,
        '/api/slow',
        c.toGroup,
      );
    });
  }
});

describe('signals from a checkout (after the build that npm pack ran)', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`node dist/src/cli/main.js start: ${signal} drains and exits 0`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'portico-signal-'));
      try {
        const exit = await signalDuringRequest(
          (host) => {
            writeFileSync(join(dir, 'gateway.yaml'), slowRoute(host));
            return launch(
              process.execPath,
              [
                join(repo, 'dist/src/cli/main.js'),
                'start',
                '--config',
                join(dir, 'gateway.yaml'),
                '--port',
                '0',
                '--host',
                '127.0.0.1',
              ],
              { cwd: dir, env: cleanEnv() },
            );
          },
          signal,
          '/api/slow',
        );
        assert.deepEqual(exit, { code: 0, signal: null });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it(`npm start (the demo, PORT=0): ${signal} to npm stops the demo and exits 0`, async () => {
      const demo = launch('npm', ['start', '--silent', '--', '--host', '127.0.0.1'], {
        cwd: repo,
        env: cleanEnv({ PORT: '0' }),
      });
      try {
        const port = await demo.port;
        const res = await fetch(`http://127.0.0.1:${port}/api/posts`);
        assert.equal(res.status, 200);
        assert.equal(((await res.json()) as unknown[]).length, 4);
        demo.child.kill(signal);
        assert.deepEqual(await within(demo.exited, START_MS, 'npm exits'), { code: 0, signal: null });
        await demo.waitForLog(isStopped, 'the gateway stopped');
        await within(demo.outputClosed, START_MS, 'every process holding the output exits');
        assert.equal(await accepts(port), false, 'nothing serves the port after the stop');
      } finally {
        if (demo.child.exitCode === null && demo.child.signalCode === null) demo.child.kill('SIGKILL');
      }
    });
  }
});
