/**
 * Validation of a parsed file: the schema (types, defaults, unknown keys with hints), then the
 * rules the schema cannot express (docs/design-decisions.md "Configuration"). Every problem is
 * collected with its position; nothing is thrown.
 */
import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import FindMyWay from 'find-my-way';
import { GatewayFileSchema, HTTP_METHODS, type GatewayFile, type HttpMethod } from './schema.js';
import { toRouterPath } from './router-path.js';
import { didYouMean, type Problem } from './problems.js';
import type { ConfigPath, ParsedConfig } from './load.js';
import { isTemplate, parseTemplate } from '../upstream/target-url.js';
import { isOrigin, parseService } from '../upstream/origin.js';
import { operationsChecks } from './ops-checks.js';

/** Paths the gateway answers itself, outside any route. */
export const RESERVED_PATHS = ['/health', '/ready', '/metrics'];

/** `notices`: warnings and notes about a valid file (`check` prints them; they never stop the gateway). */
export type Validation = { ok: true; config: GatewayFile; notices: Problem[] } | { ok: false; problems: Problem[] };

/** Validates parsed YAML; returns the typed file with defaults, or every problem found. */
export function validateConfig(parsed: ParsedConfig): Validation {
  if (parsed.value === undefined) return { ok: false, problems: parsed.problems };
  const problems: Problem[] = [...parsed.problems];
  const at = (path: ConfigPath, message: string, hint?: string) =>
    problems.push({ file: parsed.file, ...parsed.locate(path), message, ...(hint ? { hint } : {}) });

  const raw = parsed.value;
  if (raw === null || raw === undefined) {
    at([], 'the configuration file is empty; it needs at least a "routes" list');
    return { ok: false, problems };
  }
  const typed = typeEnvValues(raw, parsed.wholeEnvPaths);
  const result = GatewayFileSchema.safeParse(typed);
  if (!result.success) {
    const hinted = new Set<string>();
    const unknown = result.error.issues.filter((i) => i.code === 'unrecognized_keys');
    for (const issue of unknown) schemaProblem(issue, typed, parsed, problems, hinted);
    for (const issue of result.error.issues)
      if (issue.code !== 'unrecognized_keys') schemaProblem(issue, typed, parsed, problems, hinted);
  }
  semanticChecks(typed, at);
  compatibilityChecks(typed, at);
  if (problems.length > 0 || !result.success) {
    return { ok: false, problems: withoutEchoes(problems, parsed.problems.length) };
  }
  return { ok: true, config: result.data, notices: notices(result.data, parsed) };
}

/** An HS256 key should be at least as long as the hash (RFC 7518 section 3.2). */
export const MIN_SECRET_BYTES = 32;

/** What `check` tells about a valid file: weak settings, and keys read under another name. */
function notices(config: GatewayFile, parsed: ParsedConfig): Problem[] {
  const out: Problem[] = [];
  const note = (path: ConfigPath, severity: 'warning' | 'note', message: string, hint?: string) =>
    out.push({ file: parsed.file, ...parsed.locate(path), severity, message, ...(hint ? { hint } : {}) });
  const { auth } = config.config;
  // The secret is only used when neither an auth service nor a JWKS endpoint is set.
  if (auth.secret !== undefined && auth.authService === undefined && auth.jwksUrl === undefined) {
    const bytes = Buffer.byteLength(auth.secret);
    if (bytes < MIN_SECRET_BYTES) {
      note(
        ['config', 'auth', 'secret'],
        'warning',
        `config.auth.secret is shorter than ${MIN_SECRET_BYTES} bytes (${bytes}); tokens signed with it are easier to forge`,
        'use 32 random bytes or more, e.g. openssl rand -base64 32',
      );
    }
  }
  const { idleTimeoutSec, readTimeoutSec, writeTimeoutSec } = config.config;
  if (idleTimeoutSec !== undefined)
    note(['config', 'idleTimeoutSec'], 'note', `config.idleTimeoutSec: ${idleTimeoutSec} -> timeouts.keepAliveSec`);
  if (readTimeoutSec !== undefined) {
    note(
      ['config', 'readTimeoutSec'],
      'note',
      `config.readTimeoutSec: ${readTimeoutSec} -> the whole request (head and body) must arrive within ${readTimeoutSec} s, else 408`,
    );
  }
  if (writeTimeoutSec !== undefined) {
    note(
      ['config', 'writeTimeoutSec'],
      'note',
      `config.writeTimeoutSec: ${writeTimeoutSec} -> a client that takes none of a waiting response for ${writeTimeoutSec} s is disconnected (idle or flowing streams are not cut)`,
    );
  }
  return out.sort((a, b) => a.line - b.line || a.col - b.col);
}

/** Keys of tainha-gateway files, read under their own names, must not contradict Portico's. */
function compatibilityChecks(raw: unknown, at: (path: ConfigPath, message: string, hint?: string) => void): void {
  if (!isRecord(raw) || !isRecord(raw.config)) return;
  const timeouts = raw.config.timeouts;
  if (raw.config.idleTimeoutSec !== undefined && isRecord(timeouts) && timeouts.keepAliveSec !== undefined) {
    at(
      ['config', 'idleTimeoutSec'],
      'config.idleTimeoutSec and config.timeouts.keepAliveSec both set the keep-alive idle time',
      'keep one of them',
    );
  }
}

/**
 * `port: ${PORT:-8080}` substitutes text; where the schema wants a number or boolean at such a
 * path and the text is strictly one (`-?digits[.digits]`, `true`, `false`), it becomes one.
 * Everywhere else the text stays text, so an all-digit secret is still a string.
 */
function typeEnvValues(raw: unknown, paths: readonly ConfigPath[]): unknown {
  if (paths.length === 0) return raw;
  const probe = GatewayFileSchema.safeParse(raw);
  if (probe.success) return raw;
  const wanted = new Map<string, string>();
  for (const issue of probe.error.issues) {
    if (issue.code === 'invalid_type' && ['number', 'int', 'boolean'].includes(issue.expected))
      wanted.set(JSON.stringify(issue.path), issue.expected);
  }
  const copy = structuredClone(raw) as Record<string | number, unknown>;
  for (const path of paths) {
    const expected = wanted.get(JSON.stringify(path));
    if (expected === undefined || path.length === 0) continue;
    let parent: Record<string | number, unknown> = copy;
    for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
    const key = path[path.length - 1]!;
    const text = parent[key];
    if (typeof text !== 'string') continue;
    if (expected === 'boolean' && (text === 'true' || text === 'false')) parent[key] = text === 'true';
    else if (expected !== 'boolean' && /^-?\d+(\.\d+)?$/.test(text)) parent[key] = Number(text);
  }
  return copy;
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

/**
 * One schema issue as a problem. `hinted` collects `path key` of the keys that an unknown key's
 * hint names: a key misspelt is then reported once, not also as missing.
 */
function schemaProblem(
  issue: z.core.$ZodIssue,
  raw: unknown,
  parsed: ParsedConfig,
  problems: Problem[],
  hinted: Set<string>,
): void {
  const path = issue.path as (string | number)[];
  const where = (p: ConfigPath) => ({ file: parsed.file, ...parsed.locate(p) });
  const name = formatPath(path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      for (const key of issue.keys) {
        const hint = unknownKeyHint(path, key, parsed);
        const near = hint === undefined ? didYouMean(key, knownKeys(path)) : undefined;
        if (near !== undefined) hinted.add(JSON.stringify([...path, near]));
        problems.push({
          file: parsed.file,
          ...parsed.locateKey(path, key),
          message: `${name ? `${name}: ` : ''}unknown key "${key}"`,
          ...(hint ? { hint } : near ? { hint: `did you mean "${near}"?` } : {}),
        });
      }
      return;
    }
    case 'invalid_type': {
      const value = valueAt(raw, path);
      if (value === undefined) {
        missingKey(path);
      } else {
        const yaml11 =
          issue.expected === 'boolean' && typeof value === 'string' && /^(yes|no|on|off|y|n)$/i.test(value);
        problems.push({
          ...where(path),
          message: `${name}: expected ${describeExpected(issue.expected)}, got ${describeValue(value)}`,
          ...(yaml11 ? { hint: 'YAML 1.2 reads this as text: write true or false' } : {}),
        });
      }
      return;
    }
    case 'invalid_value': {
      const value = valueAt(raw, path);
      if (value === undefined) {
        missingKey(path);
        return;
      }
      const options = issue.values.map(String);
      const hint = typeof value === 'string' ? didYouMean(value, options) : undefined;
      problems.push({
        ...where(path),
        message: `${name}: ${JSON.stringify(value)} is not one of ${options.join(', ')}`,
        ...(hint ? { hint: `did you mean "${hint}"?` } : {}),
      });
      return;
    }
    case 'too_small':
      if (issue.origin === 'string') {
        problems.push({ ...where(path), message: `${name}: must not be empty` });
        return;
      }
      problems.push({
        ...where(path),
        message: `${name}: must be ${issue.inclusive ? 'at least' : 'greater than'} ${String(issue.minimum)}`,
      });
      return;
    case 'too_big':
      problems.push({ ...where(path), message: `${name}: must be at most ${String(issue.maximum)}` });
      return;
    default:
      if (valueAt(raw, path) === undefined) missingKey(path);
      else problems.push({ ...where(path), message: `${name}: ${issue.message}` });
  }

  function missingKey(p: readonly (string | number | symbol)[]): void {
    if (hinted.has(JSON.stringify(p))) return;
    problems.push({
      ...where(p.slice(0, -1) as ConfigPath),
      message: `${formatPath(p.slice(0, -1)) || 'file'}: missing required key "${String(p[p.length - 1])}"`,
    });
  }
}

/**
 * A hint for a key that exists one level off: a key of a child object written at this level (an
 * outdented line; when several children have it, the one written nearest above wins), or a key
 * of the parent written here (an over-indented line).
 */
function unknownKeyHint(path: readonly (string | number)[], key: string, parsed: ParsedConfig): string | undefined {
  // YAML 1.2 has no merge keys: "<<" is read as a key like any other.
  if (key === '<<') return 'YAML merge keys are not supported: write the keys out';
  const owners = childObjects(path).filter((c) => c.keys.includes(key));
  if (owners.length > 0) {
    const before = parsed.keysBefore(path, key);
    const owner =
      before.map((k) => owners.find((o) => o.name === k)).find((o) => o !== undefined) ??
      (owners.length === 1 ? owners[0] : undefined);
    if (owner) {
      const line = parsed.locateKey(path, owner.name).line;
      const where = before.includes(owner.name) ? ` on line ${line}` : '';
      return `did you mean ${owner.name}${owner.isList ? '[]' : ''}.${key}? check its indentation: it belongs under "${owner.name}:"${where}`;
    }
    return `did you mean ${owners.map((o) => `${o.name}${o.isList ? '[]' : ''}.${key}`).join(' or ')}? check its indentation`;
  }
  let parent = path.slice(0, -1);
  if (typeof path[path.length - 1] === 'number') parent = parent.slice(0, -1);
  if (path.length > 0 && knownKeys(parent).includes(key)) {
    return `did you mean ${formatPath([...parent, key])}? check its indentation: it is written one level too deep`;
  }
  return undefined;
}

/** The objects (or lists of objects) directly inside the object at `path`, with their keys. */
function childObjects(path: readonly (string | number)[]): { name: string; keys: string[]; isList: boolean }[] {
  const out: { name: string; keys: string[]; isList: boolean }[] = [];
  for (const name of knownKeys(path)) {
    const keys = knownKeys([...path, name]);
    if (keys.length > 0) out.push({ name, keys, isList: false });
    else {
      const itemKeys = knownKeys([...path, name, 0]);
      if (itemKeys.length > 0) out.push({ name, keys: itemKeys, isList: true });
    }
  }
  return out;
}

/** The keys the schema accepts for the object at `path` (for "did you mean" on unknown keys). */
function knownKeys(path: readonly (string | number)[]): string[] {
  let schema: unknown = GatewayFileSchema;
  for (const key of path) {
    schema = unwrap(schema);
    const def = (schema as { def?: { type?: string; shape?: Record<string, unknown>; element?: unknown } }).def;
    if (def?.type === 'array') schema = def.element;
    else if (def?.type === 'object' && typeof key === 'string') schema = def.shape?.[key];
    else return [];
  }
  const def = (unwrap(schema) as { def?: { shape?: Record<string, unknown> } }).def;
  return Object.keys(def?.shape ?? {});
}

function unwrap(schema: unknown): unknown {
  let s = schema as { def?: { type?: string; innerType?: unknown; options?: unknown[] } } | undefined;
  while (s?.def && ['optional', 'default', 'prefault', 'nullable'].includes(s.def.type ?? '')) {
    s = s.def.innerType as typeof s;
  }
  return s;
}

function semanticChecks(raw: unknown, at: (path: ConfigPath, message: string, hint?: string) => void): void {
  if (!isRecord(raw)) return;
  const config = isRecord(raw.config) ? raw.config : {};
  const basePath = typeof config.basePath === 'string' ? config.basePath : '/api';
  if (
    'basePath' in config &&
    typeof config.basePath === 'string' &&
    basePath !== '' &&
    (!basePath.startsWith('/') || (basePath.endsWith('/') && basePath !== '/') || /[{}?#]/.test(basePath))
  ) {
    at(
      ['config', 'basePath'],
      `config.basePath: "${basePath}" must start with "/", not end with "/", and hold no {param}, "?" or "#" (use "" for no prefix)`,
    );
  }
  const prefix = basePath === '/' ? '' : basePath;

  const tls = isRecord(config.upstreamTls) ? config.upstreamTls : {};
  if (typeof tls.caFile === 'string' && tls.caFile !== '') {
    try {
      if (!readFileSync(tls.caFile, 'utf8').includes('-----BEGIN CERTIFICATE-----'))
        at(['config', 'upstreamTls', 'caFile'], `config.upstreamTls.caFile: "${tls.caFile}" holds no PEM certificate`);
    } catch (err) {
      at(
        ['config', 'upstreamTls', 'caFile'],
        `config.upstreamTls.caFile: cannot read "${tls.caFile}" (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }

  operationsChecks(config, raw.routes, at);

  const auth = isRecord(config.auth) ? config.auth : {};
  if (auth.defaultProtected === true && !auth.secret && !auth.jwksUrl && !auth.authService) {
    at(
      ['config', 'auth', 'defaultProtected'],
      'config.auth.defaultProtected is true but no secret, jwksUrl or authService is set to validate tokens',
    );
  }
  if (typeof auth.authService === 'string') checkService(auth.authService, ['config', 'auth', 'authService'], at);
  if (typeof auth.authPath === 'string' && !auth.authPath.startsWith('/'))
    at(['config', 'auth', 'authPath'], 'config.auth.authPath: must start with "/"');
  if (typeof auth.jwksUrl === 'string' && !/^https?:\/\/[^/]/i.test(auth.jwksUrl)) {
    at(['config', 'auth', 'jwksUrl'], `config.auth.jwksUrl: "${auth.jwksUrl}" must be an http:// or https:// URL`);
  }

  if (!Array.isArray(raw.routes)) return;
  const seen = new Map<string, number>();
  const router = FindMyWay({ maxParamLength: 2048 });
  raw.routes.forEach((route: unknown, i: number) => {
    if (!isRecord(route)) return;
    const here = (key: string) => ['routes', i, key] as const;
    const label = `routes[${i}]`;
    let routeParams: readonly string[] | undefined;
    if (typeof route.route === 'string') {
      const t = parseTemplate(route.route);
      if (!route.route.startsWith('/')) at(here('route'), `${label}.route: "${route.route}" must start with "/"`);
      if (!isTemplate(t)) at(here('route'), `${label}.route: ${t.error}`);
      else if (/[?#]/.test(route.route))
        at(
          here('route'),
          `${label}.route: must not contain "?" or "#"; client query parameters are forwarded automatically`,
        );
      else if (/[*()]/.test(route.route))
        at(here('route'), `${label}.route: "*", "(" and ")" are not allowed; use {param} segments`);
      else if (/\}[^/.-]/.test(route.route)) {
        // The router ends a parameter only at "/", "." or "-": `/u/{id}x` would read `idx`.
        at(here('route'), `${label}.route: a {param} must be followed by "/", "." or "-" (or end the route)`);
      } else {
        routeParams = t.params;
        const dup = t.params.find((p, k) => t.params.indexOf(p) !== k);
        if (dup) at(here('route'), `${label}.route: parameter {${dup}} appears twice`);
        if (prefix === '' && RESERVED_PATHS.includes(route.route))
          at(
            here('route'),
            `${label}.route: "${route.route}" is answered by the gateway itself; set config.basePath or choose another route`,
          );
      }
      if (typeof route.method === 'string' && (HTTP_METHODS as readonly string[]).includes(route.method)) {
        const key = `${route.method} ${route.route.replace(/\{[^}]*\}/g, '{}')}`;
        const first = seen.get(key);
        if (first !== undefined)
          at(here('route'), `${label}: ${route.method} ${route.route} is already defined by routes[${first}]`);
        else {
          seen.set(key, i);
          // The router has its own conflict rules: ask it now, so `check` catches what `start` would.
          if (routeParams !== undefined) {
            try {
              router.on(route.method as HttpMethod, toRouterPath(prefix + route.route), () => {});
            } catch (err) {
              at(here('route'), `${label}.route: the router rejects "${route.route}": ${(err as Error).message}`);
            }
          }
        }
      }
    }
    if (typeof route.path === 'string') {
      const t = parseTemplate(route.path);
      if (!route.path.startsWith('/')) at(here('path'), `${label}.path: "${route.path}" must start with "/"`);
      if (!isTemplate(t)) at(here('path'), `${label}.path: ${t.error}`);
      else if (routeParams) {
        for (const p of new Set(t.params)) {
          if (!routeParams.includes(p))
            at(
              here('path'),
              `${label}.path: {${p}} is not a parameter of route "${String(route.route)}"`,
              hintParam(p, routeParams),
            );
        }
        for (const p of routeParams) {
          if (!t.params.includes(p))
            at(
              here('route'),
              `${label}.route: {${p}} is not used in path "${route.path}" (every parameter must appear in both route and path)`,
            );
        }
      }
    }
    if (typeof route.service === 'string') checkService(route.service, here('service'), at, `${label}.service`);
    if (route.isSSE === true && route.isWebSocket === true)
      at(here('isWebSocket'), `${label}: a route cannot be both isSSE and isWebSocket`);
    if (route.isWebSocket === true && typeof route.method === 'string' && route.method !== 'GET') {
      at(here('method'), `${label}.method: a WebSocket route must use GET (the upgrade request is a GET)`);
    }
    if (Array.isArray(route.mapping)) {
      if (route.isSSE === true || route.isWebSocket === true)
        at(here('mapping'), `${label}.mapping: a streaming route (isSSE or isWebSocket) cannot have mapping rules`);
      route.mapping.forEach((rule: unknown, j: number) => {
        if (!isRecord(rule)) return;
        const rp = (key: string) => ['routes', i, 'mapping', j, key] as const;
        const rl = `${label}.mapping[${j}]`;
        if (typeof rule.path === 'string' && rule.path !== '') {
          const t = parseTemplate(rule.path);
          if (!rule.path.startsWith('/')) at(rp('path'), `${rl}.path: "${rule.path}" must start with "/"`);
          if (!isTemplate(t)) at(rp('path'), `${rl}.path: ${t.error}`);
        }
        if (typeof rule.service === 'string' && rule.service !== '')
          checkService(rule.service, rp('service'), at, `${rl}.service`);
      });
    }
  });
}

function checkService(
  service: string,
  path: ConfigPath,
  at: (path: ConfigPath, message: string) => void,
  label = formatPath(path),
): void {
  const o = parseService(service);
  if (!isOrigin(o)) at(path, `${label}: ${o.error}`);
}

function hintParam(p: string, params: readonly string[]): string | undefined {
  const m = didYouMean(p, params);
  return m ? `did you mean {${m}}?` : undefined;
}

function formatPath(path: readonly (string | number | symbol)[]): string {
  let out = '';
  for (const k of path) out += typeof k === 'number' ? `[${k}]` : out ? `.${String(k)}` : String(k);
  return out;
}

function valueAt(raw: unknown, path: readonly (string | number | symbol)[]): unknown {
  let v = raw;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[k as string | number];
  }
  return v;
}

function describeExpected(expected: string): string {
  return expected === 'int'
    ? 'an integer'
    : expected === 'array'
      ? 'a list'
      : expected === 'object'
        ? 'a mapping'
        : `a ${expected}`;
}

function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `the string ${JSON.stringify(v)}`;
  return `${typeof v} ${String(v)}`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
