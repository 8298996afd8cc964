/**
 * The configuration's one entry point for `start`, `check`, reload and embedding: parse the YAML
 * (parse.ts), check it (validate.ts), then compile it into plain data (compile.ts). Every problem
 * comes back as data; nothing here throws on bad input.
 */
import type { CompiledConfig, LoadResult } from './types.js';
import { parseConfigFile, parseConfigText, type ParsedConfig } from './parse.js';
import { validateConfig } from './validate.js';
import { compileConfig } from './compile.js';
import { resolveTracing, writtenTelemetryKeys } from './otel-env.js';

/** Reads, validates and compiles a file: the one entry point of `start`, `check` and reload. */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): LoadResult {
  const parsed = parseConfigFile(file, env);
  const v = validateConfig(parsed);
  return v.ok ? { ok: true, config: withTracing(compileConfig(v.config, file), parsed, env), notices: v.notices } : v;
}

/**
 * `loadConfig` for a reload, while requests are being served: the parse, the validation and the
 * compilation each run in one stretch, and the event loop answers the requests that came
 * meanwhile between them, so a request waits for one step rather than for the whole load
 * (docs/performance.md#scale-in-routes). Same result as `loadConfig`.
 */
export async function loadConfigInSteps(file: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadResult> {
  const parsed = parseConfigFile(file, env);
  await nextTurn();
  const v = validateConfig(parsed);
  if (!v.ok) return v;
  await nextTurn();
  return { ok: true, config: withTracing(compileConfig(v.config, file), parsed, env), notices: v.notices };
}

/** Resolves after the event loop has polled for I/O once (setImmediate runs after the poll phase). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The same from text (tests, embedding). */
export function loadConfigText(text: string, file = 'gateway.yaml', env: NodeJS.ProcessEnv = process.env): LoadResult {
  const parsed = parseConfigText(text, file, env);
  const v = validateConfig(parsed);
  return v.ok ? { ok: true, config: withTracing(compileConfig(v.config, file), parsed, env), notices: v.notices } : v;
}

/**
 * Adds the tracing settings (the file's keys win, OTEL_* variables fill the rest) and the
 * positions of the plugin entries, so that the options a plugin's schema refuses, checked once
 * its module is imported (src/plugins/load.ts), are reported at their line like any other key.
 */
function withTracing(config: CompiledConfig, parsed: ParsedConfig, env: NodeJS.ProcessEnv): CompiledConfig {
  return Object.freeze({
    ...config,
    plugins: Object.freeze(
      config.plugins.map((p, i) =>
        Object.freeze({
          ...p,
          locate: (path: readonly (string | number)[], key?: string) =>
            key === undefined ? parsed.locate(['plugins', i, ...path]) : parsed.locateKey(['plugins', i, ...path], key),
        }),
      ),
    ),
    tracing: resolveTracing(config.settings.telemetry, writtenTelemetryKeys(parsed.value), env),
  });
}
