/**
 * The host a request is for, in the form `hosts:` patterns are compared in
 * (config/syntax/host-pattern.ts): lower case, without the port or a final dot, an IPv6 literal in
 * its brackets. The Host header was checked before routing (server/protocol-checks.ts); on HTTP/2
 * it is `:authority` (server/http2-request.ts).
 */

const OPEN_BRACKET = 91;
const DOT = 46;

/** `API.Example.com.:8443` is `api.example.com`, `[::1]:80` is `[::1]`; no Host (HTTP/1.0) is `''`. */
export function requestHostName(host: string | undefined): string {
  if (host === undefined) return '';
  let end: number;
  if (host.charCodeAt(0) === OPEN_BRACKET) end = host.indexOf(']') + 1;
  else {
    const colon = host.indexOf(':');
    end = colon < 0 ? host.length : colon;
  }
  if (end > 0 && host.charCodeAt(end - 1) === DOT) end--;
  return (end === host.length ? host : host.slice(0, end)).toLowerCase();
}
