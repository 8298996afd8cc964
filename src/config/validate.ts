/**
 * Validation of a parsed file: the schema (types, defaults, unknown keys with hints), then the
 * rules the schema cannot express (docs/design-decisions.md "Configuration"). Every problem is
 * collected with its position; nothing is thrown.
 */
import { GatewayFileSchema, type GatewayFile } from './schema.js';
import type { AddProblem, Problem } from './problems.js';
import type { ParsedConfig } from './parse.js';
import { isRecord } from './raw-value.js';
import { typeEnvValues } from './env-typing.js';
import { schemaProblems } from './schema-problems.js';
import { routePrefix, settingsRules } from './settings-rules.js';
import { compatibilityRules } from './tainha.js';
import { readRouteFields } from './route-fields.js';
import { routeRules } from './route-rules.js';
import { authorizationRules } from './authorization-rules.js';
import { requestRules } from './request-rules.js';
import { headerRules } from './header-rules.js';
import { responseRules } from './field-rules.js';
import { aggregateRules } from './aggregate-rules.js';
import { grpcRules } from './grpc-rules.js';
import { upstreamRules } from './upstream-rules.js';
import { trafficRules } from './traffic-rules.js';
import { tlsRules } from './tls-rules.js';
import { upstreamTlsRules } from './upstream-tls-rules.js';
import { adminRules } from './admin-rules.js';
import { dirname, isAbsolute, join } from 'node:path';
import { consumerRules } from './consumer-rules.js';
import { readConsumersFile } from './consumers-file.js';
import type { ConsumerConfig } from './schema.js';
import { pluginRules } from './plugin-rules.js';
import { configNotices } from './notices.js';
import { hideEnvValues } from './hide-env-values.js';

/** `notices`: warnings and notes about a valid file (`check` prints them; they never stop the gateway). */
export type Validation = { ok: true; config: GatewayFile; notices: Problem[] } | { ok: false; problems: Problem[] };

/** Validates parsed YAML; returns the typed file with defaults, or every problem found. */
export function validateConfig(parsed: ParsedConfig): Validation {
  if (parsed.value === undefined) return { ok: false, problems: parsed.problems };
  const problems: Problem[] = [...parsed.problems];
  const at: AddProblem = (path, message, hint) =>
    problems.push({ file: parsed.file, ...parsed.locate(path), message, ...(hint ? { hint } : {}) });
  const warnings: Problem[] = [];
  const warn: AddProblem = (path, message, hint) =>
    warnings.push({
      file: parsed.file,
      ...parsed.locate(path),
      severity: 'warning',
      message,
      ...(hint ? { hint } : {}),
    });

  const raw = parsed.value;
  if (raw === null || raw === undefined) {
    at([], 'the configuration file is empty; it needs at least a "routes" list');
    return { ok: false, problems };
  }
  const typed = typeEnvValues(raw, parsed.wholeEnvPaths);
  const result = GatewayFileSchema.safeParse(typed);
  if (!result.success) problems.push(...schemaProblems(result.error.issues, typed, parsed));
  if (isRecord(typed)) {
    settingsRules(typed, at);
    adminRules(typed, at, warn);
    routeRules(readRouteFields(typed.routes), routePrefix(typed), at, (path) => {
      const { line, col } = parsed.locate(path);
      return `${parsed.file}:${line}:${col}`;
    });
    authorizationRules(typed, at);
    requestRules(typed, dirname(parsed.file), at);
    headerRules(typed, at);
    responseRules(typed, at);
    aggregateRules(typed, at);
    grpcRules(typed, at, warn);
    upstreamRules(typed, at);
    trafficRules(typed, at);
    tlsRules(typed, dirname(parsed.file), at, warn);
    upstreamTlsRules(typed, dirname(parsed.file), at, warn);
    pluginRules(typed, at);
    compatibilityRules(typed, at);
    consumerRules(typed, at, warn);
  }
  // The consumers file's problems come after the configuration's, in the order of their own file.
  const fileProblems: Problem[] = [];
  const fromFile = consumersFromFile(typed, parsed.file, fileProblems);
  if (problems.length > 0 || fileProblems.length > 0 || !result.success) {
    const own = withoutEchoes(problems, parsed.problems.length);
    return { ok: false, problems: hideEnvValues([...own, ...fileProblems], parsed.envValues) };
  }
  // The file's consumers are served in place of an inline list (which validation refused beside it).
  if (fromFile !== undefined) result.data.consumers = fromFile;
  const notices = [...configNotices(result.data, parsed), ...warnings].sort((a, b) => a.line - b.line || a.col - b.col);
  return { ok: true, config: result.data, notices: hideEnvValues(notices, parsed.envValues) };
}

/** The consumers of `config.consumersFile`, read once here; its problems (its own FILE:LINE:COL) join `problems`. */
function consumersFromFile(typed: unknown, file: string, problems: Problem[]): ConsumerConfig[] | undefined {
  const config = isRecord(typed) && isRecord(typed.config) ? typed.config : {};
  if (typeof config.consumersFile !== 'string' || config.consumersFile === '') return undefined;
  // Joined, not resolved: its problems name it as the configuration's own name reads.
  const path = isAbsolute(config.consumersFile) ? config.consumersFile : join(dirname(file), config.consumersFile);
  const read = readConsumersFile(path);
  if (read.ok) return read.consumers;
  problems.push(...read.problems);
  return undefined;
}

/**
 * Sorted by position. A value that failed substitution (`${MISSING}`) is reported once: the
 * follow-on problems its empty replacement causes at the same spot are dropped.
 */
function withoutEchoes(problems: Problem[], envProblemCount: number): Problem[] {
  const envSpots = new Set(problems.slice(0, envProblemCount).map((p) => `${p.line}:${p.col}`));
  return problems
    .filter((p, i) => i < envProblemCount || !envSpots.has(`${p.line}:${p.col}`))
    .sort((a, b) => a.line - b.line || a.col - b.col);
}
