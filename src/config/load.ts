/**
 * The configuration's one entry point for `start`, `check`, reload and embedding: parse the YAML
 * (parse.ts), check it (validate.ts), then compile it into plain data (compile.ts). Every problem
 * comes back as data; nothing here throws on bad input.
 */
import type { CompiledConfig, LoadResult } from './types.js';
import { parseConfigFile, parseConfigText, type ParsedConfig } from './parse.js';
import { validateConfig } from './validate.js';
import { compileConfig, compileConfigWork, type CompileOptions } from './compile.js';
import { nextTurn, runInSlices } from './sliced-work.js';
import type { GatewayFile } from './schema.js';
import { resolveTracing, writtenTelemetryKeys } from './otel-env.js';

/** Reads, validates and compiles a file: the one entry point of `start`, `check` and reload. */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): LoadResult {
  const parsed = parseConfigFile(file, env);
  const v = validateConfig(parsed);
  return v.ok ? { ok: true, config: withTracing(compileConfig(v.config, file), parsed, env), notices: v.notices } : v;
}

/**
 * `loadConfig` while requests are being served, on this thread: the parse and the validation each
 * run in one stretch, the compilation in slices of about a ms (./sliced-work.ts), and the event loop
 * answers the requests that came meanwhile between them (docs/performance.md#scale-in-routes).
 * Same result as `loadConfig`. A reload parses and validates on a worker thread instead
 * (./load-off-thread.ts), and comes here when no worker can start.
 */
export async function loadConfigInSteps(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
  previous?: CompiledConfig,
): Promise<LoadResult> {
  const parsed = parseConfigFile(file, env);
  await nextTurn();
  const v = validateConfig(parsed);
  if (!v.ok) return v;
  await nextTurn();
  const config = await compileInSlices(v.config, file, { previous });
  return { ok: true, config: withTracing(config, parsed, env), notices: v.notices };
}

/** `compileConfig` in slices of about a ms, the event loop turning between them. */
export function compileInSlices(
  file: GatewayFile,
  fileName: string,
  options?: CompileOptions,
): Promise<CompiledConfig> {
  return runInSlices(compileConfigWork(file, fileName, options));
}

export { nextTurn };

/** The same from text (tests, embedding). */
export function loadConfigText(text: string, file = 'gateway.yaml', env: NodeJS.ProcessEnv = process.env): LoadResult {
  const parsed = parseConfigText(text, file, env);
  const v = validateConfig(parsed);
  return v.ok ? { ok: true, config: withTracing(compileConfig(v.config, file), parsed, env), notices: v.notices } : v;
}

/** Where a load finds the positions of the plugin entries, and which telemetry keys the file wrote. */
export interface LoadedText {
  readonly locate: ParsedConfig['locate'];
  readonly locateKey: ParsedConfig['locateKey'];
  /** The keys of `config.telemetry` the file set (./otel-env.ts `writtenTelemetryKeys`). */
  readonly telemetryKeys?: ReadonlySet<string>;
  readonly value?: unknown;
}

/**
 * Adds the tracing settings (the file's keys win, OTEL_* variables fill the rest) and the
 * positions of the plugin entries, so that the options a plugin's schema refuses, checked once
 * its module is imported (src/plugins/load.ts), are reported at their line like any other key.
 */
export function withTracing(config: CompiledConfig, parsed: LoadedText, env: NodeJS.ProcessEnv): CompiledConfig {
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
    tracing: resolveTracing(config.settings.telemetry, parsed.telemetryKeys ?? writtenTelemetryKeys(parsed.value), env),
  });
}
