/**
 * The head of an HTTP/2 answer as the gateway's writers give it (server/h2-response.ts): what
 * HTTP/2 forbids in it, and a writer's header array merged into it.
 */
import type { OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';

export type Headers = OutgoingHttpHeaders | OutgoingHttpHeader[];

/** What Node's own `writeHead` throws for a second head. */
export const HEADERS_SENT = { code: 'ERR_HTTP2_HEADERS_SENT' };

/** The connection-specific fields HTTP/2 forbids (RFC 9113 8.2.2): dropped from every head. */
export const CONNECTION_SPECIFIC: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

/**
 * A writer's header array into `head`: pairs (`[[name, value]]`) or flat (`[name, value, ...]`).
 * Its names replace the fields set before, and a name given twice keeps every value, as Node's
 * `writeHead` does with an array.
 */
export function appendFields(head: OutgoingHttpHeaders, headers: OutgoingHttpHeader[]): void {
  const pairs = headers.length > 0 && Array.isArray(headers[0]);
  const step = pairs ? 1 : 2;
  const fresh = new Set<string>();
  for (let i = 0; i < headers.length; i += step) {
    const name = String(pairs ? (headers[i] as unknown as OutgoingHttpHeader[])[0] : headers[i]).toLowerCase();
    const value = (pairs ? (headers[i] as unknown as OutgoingHttpHeader[])[1] : headers[i + 1]) as OutgoingHttpHeader;
    if (value === undefined || value === null || CONNECTION_SPECIFIC.has(name)) continue;
    const before = fresh.has(name) ? head[name] : undefined;
    fresh.add(name);
    if (before === undefined) head[name] = value;
    else head[name] = ([] as string[]).concat(before as string, value as string);
  }
}

/** The first value of a field that may be given as several. */
export function firstString(value: OutgoingHttpHeader | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? (value[0] as string | undefined) : String(value);
}

/**
 * The head of an answer: the fields set before (`fields`), under the writer's `headers` (theirs
 * win, as in Node's `writeHead`), the request id when the writer did not give one, and the status.
 * A new object: the writer's headers may be a shared constant.
 */
export function headOf(
  fields: OutgoingHttpHeaders | undefined,
  statusCode: number,
  headers: Headers | undefined,
  requestId: string | undefined,
): OutgoingHttpHeaders {
  const head: OutgoingHttpHeaders = fields === undefined ? {} : { ...fields };
  if (headers !== undefined) {
    if (!Array.isArray(headers)) {
      for (const name in headers) {
        const value = headers[name];
        const key = name.toLowerCase();
        if (value !== undefined && value !== null && !CONNECTION_SPECIFIC.has(key)) head[key] = value;
      }
    } else appendFields(head, headers);
  }
  if (requestId !== undefined && head['x-request-id'] === undefined) head['x-request-id'] = requestId;
  head[':status'] = statusCode;
  return head;
}
