/**
 * A stored answer sent to the client (layers/cache.ts): `304` when the client's own validators
 * match it (RFC 9110 13.1.2, 13.1.3), the part a `Range` asks for as a `206` (./range.ts), else the
 * whole answer, with `Age` and `Cache-Status`.
 */
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { Exchange } from '../pipeline/types.js';
import { parseHttpDate } from './http-date.js';
import { byteRange, ifRangeHolds } from './range.js';
import { text } from './storable.js';
import type { CacheEntry } from './store.js';

/** The fields a 304 carries from the stored answer (RFC 9110 15.4.5). */
const NOT_MODIFIED_FIELDS = ['cache-control', 'content-location', 'date', 'etag', 'expires', 'vary', 'last-modified'];

/**
 * The part of an entry's head that every hit sends alike (its fields and its length), made on its
 * first hit, as a flat list of names and values: a hit copies one array and appends Age,
 * Cache-Status and X-Request-ID. Node writes a flat list as it comes, with no setHeader of its
 * own (server/gateway-response.ts finds the id in it), and copying an array costs a fraction of
 * copying an object and adding fields to the copy.
 */
const fixedHeads = new WeakMap<CacheEntry, readonly (string | number)[]>();

function fixedHeadOf(entry: CacheEntry): readonly (string | number)[] {
  let fixed = fixedHeads.get(entry);
  if (fixed === undefined) {
    const list: (string | number)[] = [];
    for (const name in entry.headers) {
      const value = entry.headers[name]!;
      // A field stored with several values goes out as several lines, as an object's would.
      if (Array.isArray(value)) for (const v of value) list.push(name, v);
      else list.push(name, value);
    }
    list.push('content-length', entry.body.length);
    fixed = list;
    fixedHeads.set(entry, fixed);
  }
  return fixed;
}

/** The head of a stored answer as sent: its fields, its length, its age and how it was found. */
export function storedAnswerHead(entry: CacheEntry, ageSec: number, cacheStatus: string): OutgoingHttpHeaders {
  // Copied field by field: adding fields to an object spread from another is slow in V8.
  const head: OutgoingHttpHeaders = {};
  for (const name in entry.headers) head[name] = entry.headers[name];
  head['content-length'] = entry.body.length;
  head.age = String(Math.floor(ageSec));
  head['cache-status'] = cacheStatus;
  return head;
}

/** An answer made from a stored entry: its status, its head and its body (none for HEAD and 304). */
export interface StoredAnswer {
  readonly status: number;
  readonly head: OutgoingHttpHeaders;
  readonly body: Buffer | undefined;
}

/** The answer to `req` from `entry`: 304 when the client's own validators match it, a 206 for a Range, else the whole answer. */
export function storedAnswer(
  req: IncomingMessage,
  entry: CacheEntry,
  ageSec: number,
  cacheStatus: string,
): StoredAnswer {
  if (notModified(req, entry)) {
    const head: OutgoingHttpHeaders = { age: String(Math.floor(ageSec)), 'cache-status': cacheStatus };
    for (const name of NOT_MODIFIED_FIELDS) if (entry.headers[name] !== undefined) head[name] = entry.headers[name];
    return { status: 304, head, body: undefined };
  }
  const part = req.method === 'GET' && entry.status === 200 ? rangeOf(req, entry) : undefined;
  if (part !== undefined) {
    const head = storedAnswerHead(entry, ageSec, cacheStatus);
    head['content-length'] = part.end - part.start + 1;
    head['content-range'] = `bytes ${part.start}-${part.end}/${entry.body.length}`;
    return { status: 206, head, body: entry.body.subarray(part.start, part.end + 1) };
  }
  const body = req.method === 'HEAD' ? undefined : entry.body;
  return { status: entry.status, head: storedAnswerHead(entry, ageSec, cacheStatus), body };
}

/**
 * Answers `req` from `entry`. The common hit (no validators, no Range) writes its head as one
 * flat list, with the request id in it; `plainHead`: the route's writers take a flat list as it
 * is (a compressing route's writer wants an object: it adds Vary to it).
 */
export function sendStored(
  ex: Pick<Exchange, 'req' | 'res' | 'requestId'>,
  entry: CacheEntry,
  ageSec: number,
  cacheStatus: string,
  plainHead: boolean,
): void {
  const { req, res, requestId } = ex;
  const h = req.headers;
  if (plainHead && h['if-none-match'] === undefined && h['if-modified-since'] === undefined && h.range === undefined) {
    const head = fixedHeadOf(entry).slice();
    head.push('age', String(Math.floor(ageSec)), 'cache-status', cacheStatus, 'x-request-id', requestId);
    res.writeHead(entry.status, head);
    res.end(req.method === 'HEAD' ? undefined : entry.body);
    return;
  }
  const answer = storedAnswer(req, entry, ageSec, cacheStatus);
  answer.head['x-request-id'] = requestId;
  res.writeHead(answer.status, answer.head);
  res.end(answer.body);
}

/** The client's validators against the stored answer: If-None-Match first, else If-Modified-Since. */
export function notModified(req: IncomingMessage, entry: CacheEntry): boolean {
  const inm = text(req.headers['if-none-match']);
  const etag = text(entry.headers.etag);
  if (inm !== undefined) {
    if (etag === undefined) return false;
    if (inm.trim() === '*') return true;
    // Weak comparison (RFC 9110 8.8.3.2): W/"x" and "x" are the same tag here.
    const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
    return inm.split(',').some((t) => opaque(t) === opaque(etag));
  }
  const imsText = req.headers['if-modified-since'];
  if (imsText === undefined) return false;
  const ims = parseHttpDate(imsText);
  // Parsed when the answer was stored; without Last-Modified, its Date stands for it (RFC 9111 4.3.2).
  const lastModified = entry.times.lastModified ?? entry.times.date;
  return ims !== undefined && lastModified !== undefined && lastModified <= ims;
}

function rangeOf(req: IncomingMessage, entry: CacheEntry): { start: number; end: number } | undefined {
  const range = req.headers.range;
  if (range === undefined) return undefined;
  const holds = ifRangeHolds(
    text(req.headers['if-range']),
    text(entry.headers.etag),
    text(entry.headers['last-modified']),
  );
  return holds ? byteRange(range, entry.body.length) : undefined;
}
