/**
 * `service` strings: `host:port`, `http://host:port` or `https://host`. Without a scheme,
 * `http://` is assumed. A named upstream (`upstreams:`) is reached by an origin of its own.
 */
import type { Origin, UpstreamSpec } from '../types.js';

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

/** The origin a `service` string names, or why it names none. */
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
  // The credentials are not echoed: the string may have come from a secret in the environment.
  if (url.username || url.password)
    return { error: `service "${withoutCredentials(trimmed)}" must not contain credentials` };
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

/** True when `parseService` succeeded. */
export function isOrigin(o: Origin | { error: string }): o is Origin {
  return !('error' in o);
}

/** `scheme://user:password@host` as `scheme://***@host`, for messages. */
function withoutCredentials(service: string): string {
  return service.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/]*@/, '$1***@');
}
