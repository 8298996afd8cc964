/**
 * The real gateway on 127.0.0.1:0, from YAML text. Logs are captured in `logs` (parsed JSON lines)
 * so tests can assert what was logged. A configuration's plugins are imported (plugins/load.ts).
 *
 * With `PORTICO_TEST_PASSTHROUGH_PLUGIN=1` in the environment, every route of every gateway
 * started here also runs a plugin that implements every stage and changes nothing: the security
 * suites run so (test/integration/plugins-security.test.ts) to show that a plugin on the path
 * weakens no check of the trust boundary.
 */
import type { AddressInfo } from 'node:net';
import { loadConfigText } from '../../src/config/load.js';
import { formatProblem } from '../../src/config/problems.js';
import type { CompiledConfig } from '../../src/config/types.js';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/gateway.js';
import { loadPlugins } from '../../src/plugins/load.js';
import { definePlugin } from '../../src/plugins/define.js';
import type { LoadedPlugins } from '../../src/plugins/types.js';
import { captureLogger } from './capture-logger.js';
import { get, type GetOptions, type Reply } from './http.js';

export interface TestGateway {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  readonly port: number;
  readonly gateway: Gateway;
  /** Every log line written so far, parsed. */
  readonly logs: Record<string, unknown>[];
  /** GET `path` (e.g. `/api/a`) on this gateway and read the whole answer. */
  get(path: string, options?: GetOptions): Promise<Reply>;
  /** Reloads from new YAML text; throws on problems like `start` would refuse. */
  reload(yaml: string): void;
  /** Reloads from new YAML text with its plugins imported anew (plugins/load.ts). */
  reloadWithPlugins(yaml: string): Promise<void>;
  close(): Promise<void>;
}

/** The plugin `PORTICO_TEST_PASSTHROUGH_PLUGIN=1` adds to every route: every stage, no change. */
const PASSTHROUGH = definePlugin({
  onRequest() {},
  onAuthenticated() {},
  beforeUpstream() {},
  onResponse() {},
  onError() {},
});

const PASSTHROUGH_NAME = 'test-passthrough';

/** Whether the gateways of this process run the pass-through plugin on every route. */
export const passthroughPlugin = process.env.PORTICO_TEST_PASSTHROUGH_PLUGIN === '1';

/** `config` and its plugins, imported; with the pass-through plugin on every route when asked. */
async function withPlugins(config: CompiledConfig): Promise<{ config: CompiledConfig; plugins: LoadedPlugins }> {
  const loaded = config.plugins.length === 0 ? { ok: true as const, plugins: new Map() } : await loadPlugins(config);
  if (!loaded.ok) throw new Error(`test plugins invalid:\n${loaded.problems.map(formatProblem).join('\n')}`);
  if (!passthroughPlugin) return { config, plugins: loaded.plugins };
  const plugins = new Map(loaded.plugins);
  plugins.set(PASSTHROUGH_NAME, {
    name: PASSTHROUGH_NAME,
    plugin: PASSTHROUGH,
    options: undefined,
    timeoutMs: 1000,
    from: 'test/support/gateway.ts',
  });
  const routes = config.routes.map((r) => ({ ...r, plugins: [PASSTHROUGH_NAME, ...r.plugins] }));
  return { config: { ...config, routes }, plugins };
}

/** `options`: GatewayOptions besides the config and logger (e.g. shorter tunnel bounds). */
export async function startGateway(
  yaml: string,
  env: NodeJS.ProcessEnv = process.env,
  options: Omit<GatewayOptions, 'config' | 'logger'> = {},
): Promise<TestGateway> {
  const loaded = loadConfigText(yaml, 'test.yaml', env);
  if (!loaded.ok) throw new Error(`test config invalid:\n${loaded.problems.map(formatProblem).join('\n')}`);
  const { config, plugins } = await withPlugins(loaded.config);
  const { logger, lines: logs } = captureLogger();
  const gateway = createGateway({ drainTimeoutMs: 2_000, ...options, config, plugins, logger });
  const address: AddressInfo = await gateway.listen(0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    gateway,
    logs,
    get: (path, getOptions) => get(`http://127.0.0.1:${address.port}${path}`, getOptions),
    reload(next) {
      const r = loadConfigText(next, 'test.yaml', env);
      if (!r.ok) throw new Error(r.problems.map(formatProblem).join('\n'));
      if (!passthroughPlugin) return gateway.reload(r.config);
      const routes = r.config.routes.map((route) => ({ ...route, plugins: [PASSTHROUGH_NAME, ...route.plugins] }));
      gateway.reload({ ...r.config, routes }, plugins);
    },
    async reloadWithPlugins(next) {
      const r = loadConfigText(next, 'test.yaml', env);
      if (!r.ok) throw new Error(r.problems.map(formatProblem).join('\n'));
      const reloaded = await withPlugins(r.config);
      gateway.reload(reloaded.config, reloaded.plugins);
    },
    close: () => gateway.close(),
  };
}
