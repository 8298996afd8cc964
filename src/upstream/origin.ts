/**
 * `service` strings: `host:port`, `http://host:port` or `https://host`.
 * Without a scheme, `http://` is assumed. The origin (`scheme://host:port`, port always
 * written) keys the connection pool and the circuit of a backend (docs/design-decisions.md).
 */
export interface Origin {
  /** `http://host:port`, the port always explicit. */
  readonly key: string;
  readonly protocol: 'http:' | 'https:';
  readonly hostname: string;
  readonly port: number;
  /** Value of the `Host` header sent to this backend. */
  readonly hostHeader: string;
  /** TLS server name when `hostname` is an address resolved from a name (upstream/dns-targets.ts). */
  readonly serverName?: string;
  /**
   * A named upstream's targets (`upstreams:`, docs/upstreams.md); absent for a plain `service`.
   * A named upstream's origin is keyed by its name: one pool per target, one circuit for all.
   */
  readonly upstream?: UpstreamSpec;
}

export type Balance = 'least-request' | 'round-robin' | 'random';

/** A named upstream as compiled: its targets and how calls are spread over them. */
export interface UpstreamSpec {
  readonly name: string;
  readonly targets: readonly { readonly origin: Origin; readonly weight: number }[];
  readonly balance: Balance;
  readonly outlier: {
    readonly enabled: boolean;
    readonly consecutiveFailures: number;
    readonly baseEjectionMs: number;
    readonly maxEjectionPercent: number;
  };
  /** Calls to the targets may use HTTP/2 (undici's `allowH2`, negotiated by ALPN over TLS). */
  readonly http2: boolean;
  /** How often host name targets are looked up again (upstream/dns-targets.ts). */
  readonly dnsRefreshMs: number;
  /** Active health checks (upstream/health-check.ts); undefined: none. */
  readonly healthCheck?: {
    readonly path: string;
    readonly intervalMs: number;
    readonly timeoutMs: number;
    readonly healthyThreshold: number;
    readonly unhealthyThreshold: number;
  };
}

/** The origin a route reaches a named upstream by: keyed by the name, the targets inside. */
export function upstreamOrigin(spec: UpstreamSpec): Origin {
  const first = spec.targets[0]!.origin;
  return {
    key: spec.name,
    protocol: first.protocol,
    hostname: spec.name,
    port: first.port,
    hostHeader: spec.name,
    upstream: spec,
  };
}

export function parseService(service: string): Origin | { error: string } {
  const trimmed = service.trim();
  if (trimmed === '') return { error: 'service must not be empty' };
  const hasScheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(trimmed);
  if (hasScheme && !/^https?:\/\//i.test(trimmed)) {
    return { error: `service "${service}" must use http:// or https://` };
  }
  let url: URL;
  try {
    url = new URL(hasScheme ? trimmed : `http://${trimmed}`);
  } catch {
    return { error: `service "${service}" is not a valid host, host:port or URL` };
  }
  if (url.username || url.password) return { error: `service "${service}" must not contain credentials` };
  if (url.pathname !== '/' || url.search || url.hash || /[?#]|:\/\/[^/]+\/./.test(trimmed)) {
    return { error: `service "${service}" must be a host only; put the path in "path"` };
  }
  if (url.hostname === '') return { error: `service "${service}" has no host` };
  const protocol = url.protocol as 'http:' | 'https:';
  const defaultPort = protocol === 'https:' ? 443 : 80;
  const port = url.port ? Number(url.port) : defaultPort;
  return {
    key: `${protocol}//${url.hostname}:${port}`,
    protocol,
    hostname: url.hostname,
    port,
    hostHeader: url.host,
  };
}

export function isOrigin(o: Origin | { error: string }): o is Origin {
  return !('error' in o);
}
