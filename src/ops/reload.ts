/**
 * Hot reload (docs/design-decisions.md: SIGHUP, or a file change under `--watch`). The new file is
 * read, validated and compiled first (parsed and validated on a worker thread, the rest in slices
 * of about a ms: docs/performance.md "Scale in routes"), keeping what the file did not change
 * (docs/operations.md "What a reload rebuilds"); only a configuration with no problem replaces the running one,
 * by one reference swap in the gateway (in-flight requests and open streams finish on the table
 * they started with). An invalid file is logged with every problem and changes nothing.
 */
import { readFileSync, watch } from 'node:fs';
import { dirname } from 'node:path';
import { nextTurn } from '../config/load.js';
import { loadConfigOffThread } from '../config/load-off-thread.js';
import type { CompiledConfig } from '../config/types.js';
import { formatProblem } from '../config/problems.js';
import { loadPlugins } from '../plugins/load.js';
import type { LoadedPlugins } from '../plugins/types.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';

export interface Reloadable {
  readonly events: EventBus;
  readonly logger: Logger;
  /** The configuration served now: a reload compiles and builds again only what the file changed. */
  config(): CompiledConfig;
  /** Builds `config` beside the running configuration, in slices, then swaps it in. */
  reloadInSlices(config: CompiledConfig, plugins?: LoadedPlugins): Promise<void>;
}

/** The reload under way of each target, which the next one waits for. */
const underWay = new WeakMap<Reloadable, Promise<boolean>>();

/**
 * Loads `file` again, with its plugins (a changed plugin module is imported anew, plugins/load.ts),
 * and applies it; resolves true when the new configuration is being served. The load yields to
 * the event loop between its steps, so reloads of one target run one after the other: a later
 * signal, which read a later file, must never be overtaken by an earlier one.
 */
export function reloadFromFile(
  target: Reloadable,
  file: string,
  env: NodeJS.ProcessEnv,
  why: string,
): Promise<boolean> {
  const previous = underWay.get(target) ?? Promise.resolve(true);
  const next = previous.then(
    () => reloadNow(target, file, env, why),
    () => reloadNow(target, file, env, why),
  );
  underWay.set(target, next);
  return next;
}

async function reloadNow(target: Reloadable, file: string, env: NodeJS.ProcessEnv, why: string): Promise<boolean> {
  const loaded = await loadConfigOffThread(file, env, target.config());
  const next = loaded.ok ? await withPlugins(loaded.config) : loaded;
  if (!next.ok) {
    target.events.emit('config:reload', { file, ok: false, problems: next.problems.map(formatProblem) });
    return false;
  }
  // Requests come first; then the pipelines and route table are built in slices too.
  await nextTurn();
  try {
    await target.reloadInSlices(next.config, next.plugins);
  } catch (err) {
    // A bug in building the new table: the old one is still in place.
    target.logger.error({ err, why }, 'reload failed; keeping the running configuration');
    target.events.emit('config:reload', { file, ok: false, problems: [String((err as Error).message)] });
    return false;
  }
  target.events.emit('config:reload', { file, ok: true });
  target.logger.info({ why, routes: next.config.routes.length }, 'reloaded');
  return true;
}

async function withPlugins(config: CompiledConfig) {
  const plugins = await loadPlugins(config);
  return plugins.ok ? { ok: true as const, config, plugins: plugins.plugins } : plugins;
}

/** Calls `onSignal` on SIGHUP; returns the function that removes the listener. */
export function onSighup(onSignal: () => void): () => void {
  if (process.platform === 'win32') return () => {};
  process.on('SIGHUP', onSignal);
  return () => process.off('SIGHUP', onSignal);
}

/**
 * Calls `onChange` once the content of `file` changed and stayed still for `debounceMs`.
 * The folder is watched, not the file: editors save by replacing the file (a new inode) and
 * Kubernetes ConfigMap volumes swap a `..data` symlink, so events name other entries. Every
 * event is debounced and the content compared, so only real changes reload.
 */
export function watchConfigFile(file: string, onChange: () => void, debounceMs = 200): () => void {
  const read = () => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
  };
  let last = read();
  let timer: NodeJS.Timeout | undefined;
  const watcher = watch(dirname(file), () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const now = read();
      // A file caught mid-replace reads as missing: the next event brings the new one.
      if (now === undefined || now === last) return;
      last = now;
      onChange();
    }, debounceMs);
  });
  watcher.unref();
  return () => {
    clearTimeout(timer);
    watcher.close();
  };
}
