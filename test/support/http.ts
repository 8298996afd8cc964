/**
 * One request helper for the integration tests: `get(url)` sends a GET with undici and reads the
 * whole answer, so a test asserts on status, headers and body without stream handling.
 */
import { request, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';

export interface GetOptions {
  readonly headers?: Record<string, string>;
  /** The undici agent to send through (e.g. one allowing many concurrent connections). */
  readonly dispatcher?: Dispatcher;
  /** A new connection for this request instead of a kept-alive one. */
  readonly reset?: boolean;
}

/** An answer read in full. */
export interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** The body decoded as UTF-8. */
  readonly text: string;
  /** The body parsed as JSON; throws when it is not JSON. */
  json(): unknown;
}

/**
 * GET `url` and read the whole answer.
 * @example assert.equal((await get(`${gw.url}/api/a`, { headers: { authorization } })).status, 200);
 */
export async function get(url: string, options: GetOptions = {}): Promise<Reply> {
  const res = await request(url, options);
  const body = Buffer.from(await res.body.arrayBuffer());
  const text = body.toString('utf8');
  return {
    status: res.statusCode,
    // undici's header values are the same strings and string lists node:http gives.
    headers: res.headers as IncomingHttpHeaders,
    body,
    text,
    json: () => JSON.parse(text) as unknown,
  };
}

/** GET `url` and return only the status; the body is read and dropped so the connection is reused. */
export async function getStatus(url: string, options: GetOptions = {}): Promise<number> {
  const res = await request(url, options);
  await res.body.dump();
  return res.statusCode;
}

/** An answer read in full, with each header as one string (a repeated field joined by ", "). */
export interface FlatReply {
  readonly status: number;
  /** The header's value, repeated fields joined as RFC 9110 5.3 allows; undefined when absent. */
  h(name: string): string | undefined;
  readonly body: Buffer;
  readonly text: string;
}

/**
 * Send `method` to `url` with `headers` and read the whole answer; the tests of the cache compare
 * header values as single strings.
 * @example assert.equal((await fetchFlat(`${gw.url}/api/a`)).h('cache-status'), 'Portico; hit');
 */
export async function fetchFlat(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<FlatReply> {
  const res = await request(url, { method, headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  const h = (name: string) => {
    const v = res.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  };
  return { status: res.statusCode, h, body, text: body.toString() };
}
