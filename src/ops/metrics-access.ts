/**
 * Who reads GET /metrics (docs/observability.md "Who reads /metrics"). The metrics name every
 * route and backend origin, so on the public port they are not for anyone by default:
 *
 * - with `telemetry.metricsToken`, every request needs it as a bearer token (ops/bearer-check.ts);
 * - with `telemetry.metricsPublic: true`, any client reads them;
 * - otherwise only a loopback client does (a scraper on the same machine or in the same pod).
 *
 * A request from a loopback peer that carries a forwarding header (the trust boundary's list,
 * upstream/trust-boundary.ts) is not a loopback client's: a reverse proxy on this machine passed
 * on someone else's request. The admin listener, when there
 * is one, serves them to its own readers and to a bearer of the metrics token (admin/listener.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { GatewaySettings } from '../config/schema.js';
import type { ErrorCode } from '../response/errors.js';
import { normalizeAddress } from '../server/client-ip.js';
import { foldHeaderName, PEER_ASSERTED } from '../upstream/trust-boundary.js';
import { bearerCheck } from './bearer-check.js';

type Telemetry = GatewaySettings['telemetry'];

/**
 * Headers a proxy adds when it passes a request on, compared with `_` and `-` folded: any of them
 * means the client is elsewhere.
 */
const PROXY_HEADERS: ReadonlySet<string> = new Set([
  ...PEER_ASSERTED,
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
]);

/** The refusal for GET /metrics on the public port, or undefined when the request may read them. */
export function publicMetricsAccess(telemetry: Telemetry): (req: IncomingMessage) => ErrorCode | undefined {
  if (telemetry.metricsToken !== undefined) return bearerCheck(telemetry.metricsToken);
  if (telemetry.metricsPublic) return () => undefined;
  return (req) => (isLoopbackClient(req) ? undefined : 'GW_METRICS_NOT_PUBLIC');
}

/** Whether the request bears the metrics token; false when none is set. */
export function bearsMetricsToken(telemetry: Telemetry): (req: IncomingMessage) => boolean {
  if (telemetry.metricsToken === undefined) return () => false;
  const check = bearerCheck(telemetry.metricsToken);
  return (req) => req.headers.authorization !== undefined && check(req) === undefined;
}

/** A client on this machine that sent the request itself: a loopback peer, no proxy's headers. */
export function isLoopbackClient(req: IncomingMessage): boolean {
  const address = normalizeAddress(req.socket.remoteAddress ?? '');
  if (!address.startsWith('127.') && address !== '::1') return false;
  for (const name in req.headers) if (PROXY_HEADERS.has(foldHeaderName(name))) return false;
  return true;
}

/** Where and to whom GET /metrics is served, in one line (`portico check`). */
export function describeMetricsAccess(settings: Pick<GatewaySettings, 'port' | 'admin' | 'telemetry'>): string {
  const { telemetry, admin } = settings;
  if (!telemetry.metrics) return 'metrics: off (config.telemetry.metrics: false)';
  const onAdmin = admin === undefined ? '' : ` on the admin listener (${admin.host}:${admin.port}), and`;
  const who =
    telemetry.metricsToken !== undefined
      ? 'with the bearer token of config.telemetry.metricsToken'
      : telemetry.metricsPublic
        ? 'to any client (config.telemetry.metricsPublic)'
        : 'to loopback clients only';
  const hint =
    admin === undefined && telemetry.metricsToken === undefined && !telemetry.metricsPublic
      ? '; other scrapers need config.admin, config.telemetry.metricsToken or config.telemetry.metricsPublic'
      : '';
  return `metrics: GET /metrics${onAdmin} on the public port (${settings.port}) ${who}${hint}`;
}
