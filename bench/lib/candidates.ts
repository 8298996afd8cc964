/**
 * The benchmark candidates, each its own process: the backend hit directly, the Node floor, the
 * Node ceiling (bench/node-ceiling.ts), @fastify/http-proxy, and Portico (built dist) on a public
 * route, on an HS256-protected route and with metrics on. Proxies are pinned to the proxy core;
 * the backend shares the load core.
 * Portico runs with its defaults, except that metrics are switched off in every Portico row but
 * the metrics row (when the build has a switch), so that row shows what metrics cost. Its stdout
 * (the access log) is a pipe read by a separate process on the load core (processes.ts
 * `startLogDrain`), as a container runtime collects it.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { get as httpGet, type ClientRequest } from 'node:http';
import { resolve } from 'node:path';
import { SignJWT } from 'jose';
import {
  CACHE_DIR,
  ROOT,
  freePort,
  startProcess,
  transpileEntry,
  type LogCount,
  type Pinning,
  type Started,
} from './processes.js';
import { porticoRoute, type BenchScenario } from './scenarios.js';
import { startFloorDuties } from './h2load.js';
import type { LoadSpec } from './load.js';
import { GatewaySettingsSchema } from '../../src/config/schema.js';
import { SEMI_SPACE_CAP_MB, tuningFlags } from '../../src/cli/v8-tuning.js';

export type CandidateId =
  | 'backend'
  | 'node-floor'
  | 'node-floor-duties'
  | 'node-ceiling'
  | 'fastify'
  | 'portico'
  | 'portico-hs256'
  | 'portico-metrics'
  | 'portico-mapcache'
  | 'portico-admin'
  | 'portico-plugins';

/**
 * `optIn`: measured only in scenarios that name it in their `candidates` (the mapping-cache row
 * means nothing for a plain GET), and started only when such a scenario runs.
 */
export const CANDIDATES: readonly { readonly id: CandidateId; readonly label: string; readonly optIn?: boolean }[] = [
  { id: 'backend', label: 'backend hit directly' },
  { id: 'node-floor', label: 'Node floor (node:http + undici Pool.stream)' },
  { id: 'node-floor-duties', label: 'Node floor + default duties (access line, ids, X-Forwarded-*, traceparent)' },
  { id: 'node-ceiling', label: 'Node ceiling (bare undici dispatch, tuned V8)' },
  { id: 'fastify', label: '@fastify/http-proxy 11' },
  { id: 'portico', label: 'Portico, public route' },
  { id: 'portico-hs256', label: 'Portico, HS256-protected route' },
  { id: 'portico-metrics', label: 'Portico, metrics on' },
  { id: 'portico-mapcache', label: 'Portico, mapping cache on', optIn: true },
  // The dashboard's cost (docs/dashboard.md): run when named, on any scenario
  // (npm run bench -- --candidates portico,portico-admin; bench:ab --new-candidate portico-admin).
  { id: 'portico-admin', label: 'Portico, admin listener on, one page open', optIn: true },
  // The plugin stages' cost (docs/plugins.md): a no-op plugin at every stage on every route.
  { id: 'portico-plugins', label: 'Portico, a no-op plugin at every stage', optIn: true },
];

export interface RunningCandidate {
  readonly id: CandidateId;
  readonly label: string;
  /** The process whose memory is reported (the backend's own for `backend`). */
  readonly pid: number;
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  /** Headers every request of this candidate carries (the bearer token of the HS256 route). */
  readonly headers: Readonly<Record<string, string>>;
  /** Facts the table must show (a feature not landed yet, a failed start). */
  readonly notes: string[];
  /** Portico: the lines its stdout pipe carried, known once it has stopped. */
  readonly logged?: Promise<LogCount | undefined>;
  urlFor(s: BenchScenario): string;
  stop(): Promise<void>;
}

export interface CandidateContext {
  readonly pinning: Pinning | undefined;
  readonly backend: Started;
  readonly scenarios: readonly BenchScenario[];
  /** Command that runs Portico's CLI (`node dist/src/cli/main.js` or the tsx fallback). */
  readonly porticoCommand: readonly string[];
  /** PORTICO_LOG_LEVEL for Portico candidates; undefined keeps Portico's default (info). */
  readonly porticoLogLevel: string | undefined;
  /** Extra node flags for Portico and the Node baselines (e.g. --cpu-prof). */
  readonly nodeArgs?: readonly string[];
}

const HS256_SECRET = 'portico-bench-secret-0123456789abcdef';

/** A token the HS256 candidate accepts, signed once before the run. */
export async function benchToken(): Promise<string> {
  return new SignJWT({ sub: 'bench-user', role: 'user' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime('12h')
    .sign(new TextEncoder().encode(HS256_SECRET));
}

/**
 * YAML lines (under `config:`) that switch metrics on or off, in whatever form this build's schema
 * takes (`telemetry.metrics`, or `metrics.enabled`); undefined when it has no switch.
 */
export function metricsSwitch(on: boolean): string[] | undefined {
  const forms: [unknown, string[]][] = [
    [{ telemetry: { metrics: on } }, ['  telemetry:', `    metrics: ${on}`]],
    [{ metrics: { enabled: on } }, ['  metrics:', `    enabled: ${on}`]],
  ];
  for (const [value, yaml] of forms) if (GatewaySettingsSchema.safeParse(value).success) return yaml;
  return undefined;
}

/** The YAML Portico runs with: one route per scenario, all on the bench backend. */
export function porticoYaml(
  backendHost: string,
  scenarios: readonly BenchScenario[],
  extra: { auth?: boolean; metrics?: boolean; mappingCache?: boolean; adminPort?: number; plugins?: boolean },
): string {
  const lines = extra.plugins
    ? ['plugins:', `  - { name: noop, module: ${JSON.stringify(resolve(ROOT, 'bench', 'noop-plugin.mjs'))} }`]
    : [];
  lines.push('config:', '  host: 127.0.0.1');
  if (extra.plugins) lines.push('  plugins: [noop]');
  if (extra.adminPort !== undefined) lines.push('  admin:', `    port: ${extra.adminPort}`);
  if (extra.auth) lines.push('  auth:', `    secret: ${HS256_SECRET}`, '    defaultProtected: true');
  // The mapping cache is off by default; only the mapping-cache candidate turns it on.
  if (extra.mappingCache) lines.push('  mappingCache:', '    enabled: true');
  lines.push(...(metricsSwitch(extra.metrics === true) ?? []));
  lines.push('routes:');
  const seen = new Set<string>();
  for (const s of scenarios) {
    const r = porticoRoute(s);
    const key = `${s.method} ${r.route}`;
    if (seen.has(key)) continue;
    seen.add(key);
    lines.push(
      `  - method: ${s.method}`,
      `    route: "${r.route}"`,
      `    service: ${backendHost}`,
      `    path: "${r.path}"`,
    );
    if (r.mapping !== undefined && r.mapping.length > 0) {
      lines.push('    mapping:');
      for (const m of r.mapping) {
        lines.push(
          `      - path: "${m.path}"`,
          `        service: ${m.service === 'BACKEND' ? backendHost : m.service}`,
          `        tag: ${m.tag}`,
        );
        if (m.removeKeyMapping !== undefined) lines.push(`        removeKeyMapping: ${m.removeKeyMapping}`);
      }
    }
  }
  return lines.join('\n') + '\n';
}

/** Starts one candidate; a candidate that cannot start throws (the run reports and skips it). */
export async function startCandidate(id: CandidateId, ctx: CandidateContext): Promise<RunningCandidate> {
  const label = CANDIDATES.find((c) => c.id === id)?.label ?? id;
  const backendUrl = `http://127.0.0.1:${ctx.backend.port}`;
  const proxyCore = ctx.pinning?.proxyCore;
  const prefixed = (origin: string) => (s: BenchScenario) => `${origin}/api${s.path}`;

  if (id === 'backend') {
    return {
      id,
      label,
      pid: ctx.backend.pid,
      origin: backendUrl,
      headers: {},
      notes: [],
      urlFor: (s) => backendUrl + s.path,
      stop: async () => {},
    };
  }
  if (id === 'node-floor-duties') {
    // Logs like Portico: stdout into a pipe drained by another process, readiness by /health.
    const p = await startFloorDuties(backendUrl, {
      core: proxyCore,
      drainCore: ctx.pinning?.loadCore,
      nodeArgs: ctx.nodeArgs,
      name: label,
    });
    const origin = `http://127.0.0.1:${p.port}`;
    return {
      id,
      label,
      pid: p.pid,
      origin,
      headers: {},
      notes: [],
      ...(p.logged === undefined ? {} : { logged: p.logged }),
      urlFor: prefixed(origin),
      stop: () => p.stop(),
    };
  }
  if (id === 'node-floor' || id === 'node-ceiling' || id === 'fastify') {
    const entry = transpileEntry(resolve(ROOT, 'bench', `${id === 'fastify' ? 'fastify-proxy' : id}.ts`));
    // The ceiling runs under the V8 settings Portico gives itself (src/cli/v8-tuning.ts), as flags.
    const v8 = id === 'node-ceiling' ? [...tuningFlags(new Set()), `--max-semi-space-size=${SEMI_SPACE_CAP_MB}`] : [];
    const p = await startProcess({
      name: label,
      command: process.execPath,
      args: [...v8, ...(ctx.nodeArgs ?? []), entry, backendUrl],
      core: proxyCore,
      ready: { kind: 'stdout-line' },
    });
    const origin = `http://127.0.0.1:${p.port}`;
    return { id, label, pid: p.pid, origin, headers: {}, notes: [], urlFor: prefixed(origin), stop: () => p.stop() };
  }

  const auth = id === 'portico-hs256';
  const metrics = id === 'portico-metrics';
  const mappingCache = id === 'portico-mapcache';
  const adminPort = id === 'portico-admin' ? await freePort() : undefined;
  mkdirSync(CACHE_DIR, { recursive: true });
  const configFile = resolve(CACHE_DIR, `${id}.yaml`);
  writeFileSync(
    configFile,
    porticoYaml(`127.0.0.1:${ctx.backend.port}`, ctx.scenarios, {
      auth,
      metrics,
      mappingCache,
      adminPort,
      plugins: id === 'portico-plugins',
    }),
  );
  const port = await freePort();
  const [cmd, ...cmdArgs] = ctx.porticoCommand;
  const nodeArgs = ctx.nodeArgs ?? [];
  const p = await startProcess({
    name: label,
    command: cmd ?? process.execPath,
    args: [...nodeArgs, ...cmdArgs, 'start', '--config', configFile, '--port', String(port), '--host', '127.0.0.1'],
    core: proxyCore,
    env: ctx.porticoLogLevel === undefined ? {} : { PORTICO_LOG_LEVEL: ctx.porticoLogLevel },
    ready: { kind: 'health', port, path: '/health' },
    stdout: 'drain',
    drainCore: ctx.pinning?.loadCore,
  });
  const origin = `http://127.0.0.1:${port}`;
  const notes: string[] = [];
  const headers: Record<string, string> = {};
  if (auth) {
    headers.authorization = `Bearer ${await benchToken()}`;
    const first = ctx.scenarios[0];
    if (first !== undefined) {
      const anon = await fetch(`${origin}/api${porticoRoute(first).route}`, {
        method: first.method,
        body: first.body?.data,
        headers: first.body ? { 'content-type': first.body.contentType } : {},
      });
      await anon.arrayBuffer();
      if (anon.status !== 401)
        notes.push(
          `auth not enforced yet (no token got ${anon.status}): the auth feature had not landed in this build`,
        );
    }
  }
  if (metrics) {
    const m = await fetch(`${origin}/metrics`);
    const text = await m.text();
    if (m.status !== 200 || !text.includes('portico_'))
      notes.push(`no /metrics in this build (got ${m.status}): measured without metrics`);
    else if (metricsSwitch(false) === undefined) notes.push('metrics have no switch: every Portico row has them on');
  }
  // What an open status page costs: one client on the live feed, read as a browser reads it.
  const page = adminPort === undefined ? undefined : await openAdminFeed(adminPort, notes);
  return {
    id,
    label,
    pid: p.pid,
    origin,
    headers,
    notes,
    ...(p.logged === undefined ? {} : { logged: p.logged }),
    urlFor: (s) => `${origin}/api${porticoRoute(s).route}`,
    stop: () => {
      page?.destroy();
      return p.stop();
    },
  };
}

/** Connects to the admin listener's feed and drains it; a build without one is noted. */
function openAdminFeed(port: number, notes: string[]): Promise<ClientRequest | undefined> {
  return new Promise((resolve) => {
    const req = httpGet({ host: '127.0.0.1', port, path: '/api/feed', agent: false }, (res) => {
      if (res.statusCode !== 200)
        notes.push(`no admin feed in this build (got ${res.statusCode}): measured without a page open`);
      res.resume();
      resolve(req);
    });
    req.on('error', (err) => {
      notes.push(`no admin listener in this build (${err.message}): measured without it`);
      resolve(undefined);
    });
  });
}

/** How to run Portico: the built CLI when present (realistic), else tsx on the sources. */
export function porticoCommand(preferDist: boolean): { command: string[]; note?: string } {
  const dist = resolve(ROOT, 'dist/src/cli/main.js');
  if (preferDist && existsSync(dist)) return { command: [process.execPath, dist] };
  return {
    command: [process.execPath, '--import', 'tsx', resolve(ROOT, 'src/cli/main.ts')],
    note: 'Portico ran from sources under tsx (no dist build)',
  };
}

/** The headers a scenario's requests carry to a candidate (its token, the body's content type). */
export function requestHeaders(c: RunningCandidate, s: BenchScenario): Record<string, string> {
  return { ...c.headers, ...(s.body ? { 'content-type': s.body.contentType } : {}) };
}

/** The load generator's job for one candidate and scenario. */
export function loadSpecFor(
  c: RunningCandidate,
  s: BenchScenario,
  run: Pick<LoadSpec, 'connections' | 'durationSec' | 'core'>,
): LoadSpec {
  return { url: c.urlFor(s), method: s.method, headers: requestHeaders(c, s), body: s.body?.data, ...run };
}
