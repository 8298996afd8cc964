/**
 * The configuration's one entry point for `start`, `check`, reload and embedding: parse the YAML
 * (parse.ts), check it (validate.ts), then compile it into plain data (compile.ts). Every problem
 * comes back as data; nothing here throws on bad input.
 */
import type { CompiledConfig, LoadResult } from './types.js';
import { parseConfigFile, parseConfigText } from './parse.js';
import { validateConfig } from './validate.js';
import { compileConfig } from './compile.js';
import { resolveTracing, writtenTelemetryKeys } from './otel-env.js';

/** Reads, validates and compiles a file: the one entry point of `start`, `check` and reload. */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): LoadResult {
  const parsed = parseConfigFile(file, env);
  const v = validateConfig(parsed);
  return v.ok
    ? { ok: true, config: withTracing(compileConfig(v.config, file), parsed.value, env), notices: v.notices }
    : v;
}

/** The same from text (tests, embedding). */
export function loadConfigText(text: string, file = 'gateway.yaml', env: NodeJS.ProcessEnv = process.env): LoadResult {
  const parsed = parseConfigText(text, file, env);
  const v = validateConfig(parsed);
  return v.ok
    ? { ok: true, config: withTracing(compileConfig(v.config, file), parsed.value, env), notices: v.notices }
    : v;
}

/** Adds the tracing settings: the file's keys win, OTEL_* variables fill the rest. */
function withTracing(config: CompiledConfig, raw: unknown, env: NodeJS.ProcessEnv): CompiledConfig {
  return Object.freeze({
    ...config,
    tracing: resolveTracing(config.settings.telemetry, writtenTelemetryKeys(raw), env),
  });
}
