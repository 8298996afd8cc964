/**
 * Imports the configuration's plugins (the top-level `plugins:` list) and checks each one's
 * options against the schema it declares. Used by `portico check` (a module that cannot be
 * imported, or options its schema refuses, are located problems like any other), `start`, and
 * every reload.
 *
 * Reload and the module cache: ESM caches a module by its URL for the life of the process, so a
 * plugin file is imported with a query that names its content (`?v=<hash>`): a changed file is a
 * new URL and is imported anew, an unchanged one is the cached module. The old version stays in
 * memory (Node offers no way to unload a module), one per change of the file, which reloads bound.
 * What the plugin file itself imports is cached by its own URL, and not imported again.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { CompiledConfig, Problem } from '../config/types.js';
import type { PluginSpec } from '../config/schema.js';
import { loadConfig } from '../config/load.js';
import { isPlugin } from './define.js';
import { checkOptions } from './option-problems.js';
import { resolvePluginModule } from './resolve-module.js';
import type { LoadedPlugin, LoadedPlugins } from './types.js';

export type PluginLoad = { ok: true; plugins: LoadedPlugins } | { ok: false; problems: Problem[] };

/** Imports every plugin of `config` and checks its options; every problem comes back, located. */
export async function loadPlugins(config: CompiledConfig): Promise<PluginLoad> {
  const problems: Problem[] = [];
  const plugins = new Map<string, LoadedPlugin>();
  const loaded = await Promise.all(config.plugins.map((spec, i) => loadOne(spec, i, config.file)));
  for (const result of loaded) {
    if ('problems' in result) problems.push(...result.problems);
    else plugins.set(result.plugin.name, result.plugin);
  }
  problems.push(...bodyStageProblems(config, plugins));
  problems.sort((a, b) => a.line - b.line || a.col - b.col);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, plugins };
}

/**
 * `onResponseBody` runs on standard routes only (endpoints/json-transform.ts): another kind of
 * route listing such a plugin would skip it silently, and a plugin that redacts would be bypassed.
 */
function bodyStageProblems(config: CompiledConfig, plugins: LoadedPlugins): Problem[] {
  const problems: Problem[] = [];
  config.plugins.forEach((spec, index) => {
    const lp = plugins.get(spec.name);
    if (lp?.plugin.onResponseBody === undefined) return;
    const route = config.routes.find((r) => r.kind !== 'standard' && r.plugins.includes(spec.name));
    if (route === undefined) return;
    problems.push({
      file: config.file,
      ...(spec.locate?.(['name']) ?? { line: 1, col: 1 }),
      message: `plugins[${index}]: "${spec.name}" transforms JSON answers (onResponseBody), which only standard routes do, and route ${route.id} (${route.kind}) runs it`,
      hint: 'run it on routes without mapping, field rules, aggregation, SSE, WebSocket or gRPC (docs/plugins.md#transforming-a-json-response)',
    });
  });
  return problems;
}

async function loadOne(
  spec: PluginSpec,
  index: number,
  file: string,
): Promise<{ plugin: LoadedPlugin } | { problems: Problem[] }> {
  const at = (message: string, hint?: string): { problems: Problem[] } => ({
    problems: [
      {
        file,
        ...(spec.locate?.(['module']) ?? { line: 1, col: 1 }),
        message: `plugins[${index}].module: ${message}`,
        ...(hint === undefined ? {} : { hint }),
      },
    ],
  });
  const where = resolvePluginModule(spec.module, spec.baseDir);
  if ('error' in where) return at(`cannot find "${spec.module}": ${where.error}`);
  let exported: unknown;
  try {
    const version = createHash('sha256').update(readFileSync(where.file)).digest('hex').slice(0, 16);
    const url = `${pathToFileURL(where.file).href}?v=${version}`;
    exported = ((await import(url)) as { default?: unknown }).default;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return at(
      `cannot import "${spec.module}": ${firstLine(err)}`,
      code === 'ERR_UNKNOWN_FILE_EXTENSION'
        ? 'this Node cannot load TypeScript by itself: compile the plugin to .js, use Node >= 23.6, or start with NODE_OPTIONS="--import tsx"'
        : undefined,
    );
  }
  if (!isPlugin(exported))
    return at(
      `"${spec.module}" has no plugin as its default export`,
      "export default definePlugin({ ... }), with definePlugin from 'portico'",
    );
  const options = checkOptions(spec, index, exported.options, file);
  if (!options.ok) return { problems: options.problems };
  return {
    plugin: {
      name: spec.name,
      plugin: exported,
      options: options.options,
      timeoutMs: spec.timeoutMs,
      from: where.file,
    },
  };
}

function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0] ?? message;
}

/** A configuration loaded with its plugins imported: what `start`, `check` and reload use. */
export type LoadedConfig =
  | { ok: true; config: CompiledConfig; plugins: LoadedPlugins; notices: readonly Problem[] }
  | { ok: false; problems: readonly Problem[] };

/** `loadConfig`, then `loadPlugins` on a valid file: every problem of either, located. */
export async function loadConfigWithPlugins(file: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedConfig> {
  const loaded = loadConfig(file, env);
  if (!loaded.ok) return loaded;
  const plugins = await loadPlugins(loaded.config);
  return plugins.ok ? { ...loaded, plugins: plugins.plugins } : plugins;
}
