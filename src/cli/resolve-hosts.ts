/**
 * `portico check --resolve`: every backend host name of a valid configuration is looked up once,
 * the way the gateway will look it up (the system resolver), and each place that names a host
 * that does not resolve is a problem at its FILE:LINE:COL. Opt-in: a configuration written for
 * another network (containers, a cluster's DNS) is valid where it does not resolve.
 */
import dns from 'node:dns';
import { isIP } from 'node:net';
import type { CompiledConfig } from '../config/types.js';
import type { ConfigPath } from '../config/parse.js';
import type { Problem } from '../config/problems.js';

/** The system resolver can hang on a dead name server; each look-up gets this long. */
export const RESOLVE_TIMEOUT_MS = 5_000;

export type Lookup = (hostname: string) => Promise<unknown>;

interface HostUse {
  readonly path: ConfigPath;
  readonly label: string;
  readonly hostname: string;
}

/** Where the configuration names a host: routes, aggregated backends, mapping rules, auth, telemetry, Redis. */
function hostUses(config: CompiledConfig): HostUse[] {
  const uses: HostUse[] = [];
  config.routes.forEach((r, i) => {
    if (r.backends.length === 0)
      uses.push({ path: ['routes', i, 'service'], label: `routes[${i}].service`, hostname: r.origin.hostname });
    r.backends.forEach((b, j) =>
      uses.push({
        path: ['routes', i, 'backends', j, 'service'],
        label: `routes[${i}].backends[${j}].service`,
        hostname: b.origin.hostname,
      }),
    );
    r.mapping.forEach((m, j) =>
      uses.push({
        path: ['routes', i, 'mapping', j, 'service'],
        label: `routes[${i}].mapping[${j}].service`,
        hostname: m.origin.hostname,
      }),
    );
  });
  const { auth, telemetry } = config.settings;
  const add = (path: ConfigPath, label: string, url: string | undefined, withScheme: boolean) => {
    if (url === undefined) return;
    try {
      uses.push({ path, label, hostname: new URL(withScheme ? url : `http://${url}`).hostname });
    } catch {
      // Validation accepted it; a form URL cannot parse has no host name to look up.
    }
  };
  add(
    ['config', 'auth', 'authService'],
    'config.auth.authService',
    auth.authService,
    /^https?:\/\//i.test(auth.authService ?? ''),
  );
  add(['config', 'auth', 'jwksUrl'], 'config.auth.jwksUrl', auth.jwksUrl, true);
  add(['config', 'auth', 'introspection', 'url'], 'config.auth.introspection.url', auth.introspection?.url, true);
  // tainha-gateway's exporterEndpoint, when it applies, is what the file wrote for otlpEndpoint.
  const otlpKey =
    telemetry.enabled === true && telemetry.exporterEndpoint !== undefined ? 'exporterEndpoint' : 'otlpEndpoint';
  add(['config', 'telemetry', otlpKey], `config.telemetry.${otlpKey}`, telemetry.otlpEndpoint, true);
  add(['config', 'redis', 'url'], 'config.redis.url', config.settings.redis?.url, true);
  return uses;
}

/** Looks every distinct host name up at once; one problem per place naming a host that fails. */
export async function resolveProblems(
  config: CompiledConfig,
  locate: (path: ConfigPath) => { line: number; col: number },
  lookup: Lookup = (host) => dns.promises.lookup(host),
  timeoutMs = RESOLVE_TIMEOUT_MS,
): Promise<Problem[]> {
  const uses = hostUses(config);
  const names = [...new Set(uses.map((u) => u.hostname.replace(/^\[|\]$/g, '')).filter((h) => isIP(h) === 0))];
  const failures = new Map<string, string>();
  await Promise.all(
    names.map(async (host) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })), timeoutMs);
      });
      try {
        await Promise.race([lookup(host), timeout]);
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        failures.set(
          host,
          code === 'TIMEOUT'
            ? `no answer from the resolver within ${timeoutMs / 1000} s`
            : typeof code === 'string'
              ? code
              : (err as Error).message,
        );
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const problems: Problem[] = [];
  for (const use of uses) {
    const why = failures.get(use.hostname);
    if (why !== undefined)
      problems.push({
        file: config.file,
        ...locate(use.path),
        message: `${use.label}: host "${use.hostname}" does not resolve (${why})`,
      });
  }
  return problems;
}
