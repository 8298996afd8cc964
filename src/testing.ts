/**
 * `portico/testing`: run a plugin against a real gateway in your own process (docs/plugins.md
 * "Testing a plugin"). `testPlugin` starts a local backend and a gateway on ephemeral ports of
 * 127.0.0.1, with the plugin on every route, and returns the gateway's URL to `fetch`.
 *
 * @example
 * const t = await testPlugin({ plugin: './plugins/api-key.ts', options: { keys: { k1: 'alice' } } });
 * const res = await fetch(`${t.url}/hello`, { headers: { 'x-api-key': 'k1' } });
 * assert.equal(t.requests[0]?.headers['x-consumer'], 'alice');
 * await t.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { isAbsolute, resolve } from 'node:path';
import { loadConfigText } from './config/load.js';
import { formatProblem } from './config/problems.js';
import { createGateway } from './gateway.js';
import { createLogger } from './observability/logger.js';
import { loadPlugins } from './plugins/load.js';
import { checkOptions } from './plugins/option-problems.js';
import type { LoadedPlugins, Plugin } from './plugins/types.js';
import type { HttpMethod } from './config/schema.js';

/** One request the backend received. */
export interface BackendRequest {
  readonly method: string;
  /** Path and query as the backend got them. */
  readonly url: string;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

export interface TestPluginOptions {
  /**
   * The plugin: a module path (relative to the working directory), a package name installed
   * there, or what `definePlugin` returned.
   */
  readonly plugin: string | Plugin;
  /** The plugin's options, as the configuration's `options:` would hold them. */
  readonly options?: unknown;
  /** The plugin's `timeoutMs` (1000 by default). */
  readonly timeoutMs?: number;
  /** The routes, each with the plugin, sent to the same path on the backend; default: GET and POST /hello. */
  readonly routes?: readonly { readonly method: HttpMethod; readonly route: string; readonly path?: string }[];
  /**
   * The backend; default: answers 200 with the request it got as JSON
   * (`{ method, url, headers, body }`).
   */
  readonly backend?: (req: IncomingMessage, res: ServerResponse, body: string) => void;
  /** More `config:` settings of the gateway (e.g. `{ auth: { secret: '...' } }`). */
  readonly config?: Readonly<Record<string, unknown>>;
}

export interface PluginUnderTest {
  /** `http://127.0.0.1:PORT`: the gateway, with the routes under no base path. */
  readonly url: string;
  /** Every request the backend received, in order. */
  readonly requests: readonly BackendRequest[];
  /** The gateway's log lines so far, parsed (the plugin's own lines carry its name). */
  readonly logs: readonly Record<string, unknown>[];
  /** Stops the gateway and the backend. */
  close(): Promise<void>;
}

const NAME = 'under-test';

/** Starts a backend and a gateway running the plugin on every route; see the module's example. */
export async function testPlugin(options: TestPluginOptions): Promise<PluginUnderTest> {
  const requests: BackendRequest[] = [];
  const backend = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const seen = { method: req.method ?? 'GET', url: req.url ?? '/', headers: { ...req.headers }, body };
      requests.push(seen);
      if (options.backend !== undefined) return options.backend(req, res, body);
      const text = JSON.stringify(seen);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  await new Promise<void>((ok) => backend.listen(0, '127.0.0.1', ok));
  const port = (backend.address() as AddressInfo).port;
  const routes = options.routes ?? [
    { method: 'GET', route: '/hello' },
    { method: 'POST', route: '/hello' },
  ];
  const fromFile = typeof options.plugin === 'string';
  const yaml = JSON.stringify({
    plugins: [
      {
        name: NAME,
        module: fromFile ? moduleOf(options.plugin as string) : 'inline',
        ...(options.options === undefined ? {} : { options: options.options }),
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      },
    ],
    routes: routes.map((r) => ({
      method: r.method,
      route: r.route,
      service: `127.0.0.1:${port}`,
      path: r.path ?? r.route,
      plugins: [NAME],
    })),
    config: { basePath: '', ...options.config },
  });
  const close = () => new Promise<void>((ok) => backend.close(() => ok()));
  const loaded = loadConfigText(yaml, resolve('portico-test.yaml'), {});
  if (!loaded.ok) {
    await close();
    throw new Error(`testPlugin: ${loaded.problems.map(formatProblem).join('\n')}`);
  }
  const plugins = fromFile ? await loadPlugins(loaded.config) : inline(options.plugin as Plugin, loaded.config);
  if (!plugins.ok) {
    await close();
    throw new Error(`testPlugin: ${plugins.problems.map((p) => p.message).join('\n')}`);
  }
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logs.push(JSON.parse(line) as never);
      done();
    },
  });
  const gateway = createGateway({
    config: loaded.config,
    plugins: plugins.plugins,
    logger: createLogger({ level: 'debug', destination }),
    drainTimeoutMs: 1000,
  });
  const address = await gateway.listen(0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    logs,
    async close() {
      backend.closeAllConnections();
      await Promise.all([gateway.close(), close()]);
    },
  };
}

/** A path is made absolute; a package name is resolved from the working directory. */
function moduleOf(plugin: string): string {
  return plugin.startsWith('.') || isAbsolute(plugin) ? resolve(plugin) : plugin;
}

/** A plugin object given as it is: its options checked as the loader would. */
function inline(
  plugin: Plugin,
  config: Parameters<typeof loadPlugins>[0],
): { ok: true; plugins: LoadedPlugins } | { ok: false; problems: { message: string }[] } {
  const spec = config.plugins[0]!;
  const checked = checkOptions(spec, 0, plugin.options, config.file);
  if (!checked.ok) return checked;
  return {
    ok: true,
    plugins: new Map([
      [NAME, { name: NAME, plugin, options: checked.options, timeoutMs: spec.timeoutMs, from: 'inline' }],
    ]),
  };
}
