/**
 * The library entry point (`import { createGateway } from 'portico'`): load a configuration,
 * run a gateway in your own process, stop it. The CLI is built from the same parts.
 *
 * @example
 * const loaded = loadConfigText(yamlText);
 * if (!loaded.ok) throw new Error(loaded.problems.map(formatProblem).join('\n'));
 * const gateway = createGateway({ config: loaded.config });
 *
 * With plugins (docs/plugins.md), load the configuration with them:
 * const loaded = await loadConfigWithPlugins('gateway.yaml');
 * const gateway = createGateway({ config: loaded.config, plugins: loaded.plugins });
 * const { port } = await gateway.listen(0, '127.0.0.1');
 * await gateway.close();
 */
export { createGateway, type Gateway, type GatewayOptions } from './gateway.js';
export { loadConfig, loadConfigText } from './config/load.js';
export type { CompiledConfig, LoadResult, RouteSpec } from './config/types.js';
export type { CompiledRoute } from './pipeline/types.js';
export { formatProblem, type Problem } from './config/problems.js';
export { createLogger, type Logger } from './observability/logger.js';
export { z } from 'zod';
export { definePlugin } from './plugins/define.js';
export { loadPlugins, loadConfigWithPlugins, type PluginLoad, type LoadedConfig } from './plugins/load.js';
export type * from './plugins/types.js';
