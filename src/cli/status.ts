/**
 * `portico status [--admin URL]`: the status page's summary in the terminal, read from a running
 * gateway's admin listener (`GET /api/status`, docs/dashboard.md). Without `--admin`, the
 * configuration's `config.admin` says where it listens; the token is `$PORTICO_ADMIN_TOKEN`, else
 * the configuration's `admin.token`, so that it never has to appear on a command line.
 */
import { request } from 'undici';
import type { CliArgs } from './args.js';
import { loadConfig } from '../config/load.js';
import { formatProblem } from '../config/problems.js';
import { formatDuration } from '../admin/page/format-duration.js';
import type { StatusDocument, TrafficWindow } from '../admin/types.js';
import { formatColumns } from './columns.js';

/** How long the admin listener may take to answer. */
const TIMEOUT_MS = 5_000;
/** Errors printed; the page shows all 50. */
const ERRORS_SHOWN = 10;

export interface StatusRun {
  readonly code: 0 | 1 | 2;
  readonly stdout: string;
  readonly stderr: string;
}

/** Asks the admin listener and formats its answer; never throws for a user or network mistake. */
export async function runStatus(args: CliArgs, env: NodeJS.ProcessEnv): Promise<StatusRun> {
  const target = where(args, env);
  if ('code' in target) return target;
  const base = target.url.replace(/\/+$/, '');
  let res;
  try {
    res = await request(`${base}/api/status`, {
      headers: target.token === undefined ? {} : { authorization: `Bearer ${target.token}` },
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    return failed(`cannot reach the admin listener at ${base}: ${code ?? (err as Error).message}`);
  }
  const text = await res.body.text();
  if (res.statusCode === 401)
    return failed(
      `the admin listener at ${base} wants its token: set $PORTICO_ADMIN_TOKEN${args.admin === undefined ? '' : ' (or give --config with config.admin.token)'}`,
    );
  if (res.statusCode !== 200)
    return failed(`the admin listener at ${base} answered ${res.statusCode}: ${text.slice(0, 200)}`);
  let doc: StatusDocument;
  try {
    doc = JSON.parse(text) as StatusDocument;
  } catch {
    return failed(`${base}/api/status did not answer JSON: is it a Portico admin listener?`);
  }
  return { code: 0, stdout: formatStatus(doc), stderr: '' };
}

/** The admin URL and token from the flags, the environment and the configuration. */
function where(args: CliArgs, env: NodeJS.ProcessEnv): { url: string; token: string | undefined } | StatusRun {
  const envToken = env.PORTICO_ADMIN_TOKEN === '' ? undefined : env.PORTICO_ADMIN_TOKEN;
  if (args.admin !== undefined) {
    if (!/^https?:\/\/[^/]/i.test(args.admin))
      return {
        code: 2,
        stdout: '',
        stderr: `portico: --admin ${args.admin}: expected a URL such as http://127.0.0.1:9901\n`,
      };
    // The configuration is read for its token only when one was named and no variable gives it.
    if (envToken !== undefined || !args.configGiven) return { url: args.admin, token: envToken };
  }
  const loaded = loadConfig(args.config, env);
  if (!loaded.ok) return { code: 1, stdout: '', stderr: loaded.problems.map(formatProblem).join('\n') + '\n' };
  const admin = loaded.config.settings.admin;
  if (args.admin !== undefined) return { url: args.admin, token: admin?.token };
  if (admin === undefined)
    return failed(`${args.config} has no config.admin: the gateway has no admin listener (or give --admin URL)`);
  const host = admin.host === '0.0.0.0' ? '127.0.0.1' : admin.host === '::' ? '::1' : admin.host;
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${admin.port}`, token: envToken ?? admin.token };
}

function failed(message: string): StatusRun {
  return { code: 1, stdout: '', stderr: `portico: ${message}\n` };
}

/**
 * Control characters (C0 but tab and newline, DEL, C1): text from the document (a path, a
 * backend's error) never reaches the terminal as escape sequences, whoever serves `--admin URL`.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** The summary `portico status` prints. */
export function formatStatus(doc: StatusDocument): string {
  return summary(doc).replace(CONTROL, '?');
}

function summary(doc: StatusDocument): string {
  const g = doc.gateway;
  const out: string[] = [];
  out.push(
    `Portico ${g.version}, up ${formatDuration(g.uptimeSec)} (pid ${g.pid}${g.worker === undefined ? '' : `, worker ${g.worker}`}), ${g.inFlight} in flight`,
  );
  const last = doc.reloads.last;
  out.push(
    `Config ${g.configFile}; last reload: ${last === null ? 'none since the start' : `${clock(last.time)} ${last.ok ? 'applied' : `rejected (${last.problems?.length ?? 0} problems)`}`}`,
  );
  if (last !== null && !last.ok) for (const p of last.problems ?? []) out.push(`  ${p}`);
  out.push(`Last minute: ${traffic(doc.traffic.lastMinute)}`);
  out.push(
    `Rate limited: ${doc.rateLimit.enabled ? `${doc.rateLimit.rejectedLastMinute} in the last minute, ${doc.rateLimit.rejectedTotal} since the start` : 'off'}`,
  );
  for (const c of doc.callers.slice(0, 3)) {
    const windows = c.windows.map((w) => `${w.window} ${w.used}/${w.limit}`).join(', ');
    out.push(
      `Caller ${c.caller}${c.route === undefined ? '' : ` on ${c.route}`}: ${windows || 'no quota'}; ${c.quotaRefused} over quota, ${c.rateLimited} rate limited`,
    );
  }
  out.push(`Open streams: ${doc.streams.sse} SSE, ${doc.streams.websocket} WebSocket`);
  const c = doc.mappingCache;
  out.push(
    `Mapping cache: ${!c.enabled ? 'off' : c.hitRatio === null ? 'no lookup yet' : `${Math.round(c.hitRatio * 100)}% hits (${c.hits} of ${c.hits + c.misses}), ${c.size} entries, ${c.evictions} evicted`}`,
  );
  out.push('');
  out.push(
    formatColumns([
      ['ROUTE', 'BACKEND', 'AUTH', 'REQ/S', '2XX', '4XX', '5XX', 'P50 MS', 'P99 MS'],
      ...doc.routes.map((r) => [
        `${r.methods} ${r.path}`,
        r.backend,
        r.auth,
        String(r.lastMinute.perSec),
        String(r.lastMinute.statuses['2xx']),
        String(r.lastMinute.statuses['4xx']),
        String(r.lastMinute.statuses['5xx']),
        ms(r.lastMinute.p50Ms),
        ms(r.lastMinute.p99Ms),
      ]),
    ]).trimEnd(),
  );
  out.push('');
  const backends: string[][] = [['BACKEND', 'CIRCUIT', 'CALLS/MIN', 'FAILED/MIN']];
  for (const b of doc.backends) {
    const failures = b.circuit.consecutiveFailures;
    backends.push([
      b.origin,
      `${b.circuit.state}${failures > 0 ? ` (${failures} failures in a row)` : ''}`,
      String(b.lastMinute.calls),
      String(b.lastMinute.failures),
    ]);
    for (const t of b.targets ?? [])
      backends.push([`  ${t.target}`, t.ejected ? 'ejected' : t.healthy ? 'healthy' : 'unhealthy', '', '']);
  }
  out.push(formatColumns(backends).trimEnd());
  if (!doc.circuitBreaker.enabled) out.push('(the circuit breaker is off: every circuit stays closed)');
  out.push('');
  if (doc.errors.length === 0) out.push('No error since the start.');
  else {
    out.push(`Last errors (${Math.min(ERRORS_SHOWN, doc.errors.length)} of the last ${doc.errors.length}):`);
    out.push(
      formatColumns(
        doc.errors
          .slice(0, ERRORS_SHOWN)
          .map((e) => [clock(e.time), String(e.status), e.code, `${e.method} ${e.path}`, e.requestId, e.detail ?? '']),
      ).trimEnd(),
    );
  }
  return out.join('\n') + '\n';
}

function traffic(w: TrafficWindow): string {
  const s = w.statuses;
  return (
    `${w.requests} requests (${w.perSec}/s): 2xx ${s['2xx']}, 3xx ${s['3xx']}, 4xx ${s['4xx']}, 5xx ${s['5xx']}; ` +
    `p50 ${ms(w.p50Ms)} ms, p99 ${ms(w.p99Ms)} ms`
  );
}

function ms(value: number | null): string {
  return value === null ? '-' : String(value);
}

/** `HH:MM:SSZ` of an ISO time: the day is today's in a status summary. */
function clock(iso: string): string {
  return `${iso.slice(11, 19)}Z`;
}
