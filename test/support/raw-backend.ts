/**
 * A backend on a plain TCP socket (127.0.0.1:0) that records exactly the bytes it receives and
 * reads them with a strict HTTP/1.1 request parser, so a test can tell what the gateway really
 * sent: how many requests, framed how. It answers with whatever bytes the test's `respond` writes,
 * including answers no HTTP library would produce (a hostile backend).
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ParsedRequest {
  readonly method: string;
  readonly target: string;
  /** Header names lower-cased, in order, repeated names kept. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
  /** Index of the connection it came on. */
  readonly connection: number;
}

export interface RawBackend {
  readonly port: number;
  /** `127.0.0.1:PORT`, the form a `service:` takes. */
  readonly host: string;
  /** Every byte received, one entry a connection. */
  readonly bytes: Buffer[];
  /** Every request parsed so far, in arrival order. */
  readonly requests: ParsedRequest[];
  /** Why the bytes of a connection stopped parsing as HTTP/1.1 (none when the gateway framed everything cleanly). */
  readonly framingErrors: string[];
  /** Resolves with the next parsed request (or one already parsed and not yet taken). */
  nextRequest(ms?: number): Promise<ParsedRequest>;
  close(): Promise<void>;
}

export type Respond = (req: ParsedRequest, socket: Socket) => void;

/** Answers 200 with the request target as the body unless given `respond`. */
export async function startRawBackend(respond: Respond = echoTarget): Promise<RawBackend> {
  const bytes: Buffer[] = [];
  const requests: ParsedRequest[] = [];
  const framingErrors: string[] = [];
  const sockets = new Set<Socket>();
  let taken = 0;
  const waiters: (() => void)[] = [];
  const server: Server = createServer((socket) => {
    const index = bytes.length;
    bytes.push(Buffer.alloc(0));
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let pending = Buffer.alloc(0);
    let broken = false;
    socket.on('data', (d: Buffer) => {
      bytes[index] = Buffer.concat([bytes[index]!, d]);
      if (broken) return;
      pending = Buffer.concat([pending, d]);
      for (;;) {
        const r = parseStrict(pending);
        if (r === undefined) break;
        if ('error' in r) {
          broken = true;
          framingErrors.push(
            `connection ${index}: ${r.error}: ${JSON.stringify(pending.toString('latin1').slice(0, 200))}`,
          );
          break;
        }
        pending = pending.subarray(r.used);
        const req = { ...r.request, connection: index };
        requests.push(req);
        for (const w of waiters.splice(0)) w();
        respond(req, socket);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    host: `127.0.0.1:${port}`,
    bytes,
    requests,
    framingErrors,
    nextRequest(ms = 5_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no request within ${ms} ms`)), ms);
        const attempt = () => {
          const next = requests[taken];
          if (next === undefined) return void waiters.push(attempt);
          taken++;
          clearTimeout(timer);
          resolve(next);
        };
        attempt();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The value of header `name` (lower case), undefined when absent, an error when repeated. */
export function header(req: ParsedRequest, name: string): string | undefined {
  const values = req.headers.filter(([n]) => n === name).map(([, v]) => v);
  if (values.length > 1) throw new Error(`${name} repeated: ${values.join(' | ')}`);
  return values[0];
}

function echoTarget(req: ParsedRequest, socket: Socket): void {
  const body = Buffer.from(req.target);
  socket.write(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n`);
  socket.write(body);
}

export type ParseResult = { request: Omit<ParsedRequest, 'connection'>; used: number } | { error: string } | undefined;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** chunk-size [ chunk-ext ] (RFC 9112 7.1.1), BWS allowed around `;` and `=`. */
const CHUNK_LINE =
  /^[0-9a-fA-F]{1,8}(?:[ \t]*;[ \t]*[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:[ \t]*=[ \t]*(?:[!#$%&'*+\-.^_`|~0-9A-Za-z]+|"(?:[\t !#-[\]-~\x80-\xff]|\\[\t -~\x80-\xff])*"))?)*$/;
/** Optional whitespace is SP and HTAB only: no VT, FF, NBSP (what String.trim removes). */
const trimOws = (v: string) => v.replace(/^[ \t]+|[ \t]+$/g, '');

/**
 * One request read by RFC 9112 strictly: CRLF line ends only, no obsolete line folding, no
 * whitespace before a colon, field values of visible characters, SP and HTAB, one Content-Length
 * of digits, Transfer-Encoding exactly `chunked` (any case) and never with Content-Length.
 * Undefined when more bytes are needed.
 */
export function parseStrict(buf: Buffer): ParseResult {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd < 0) {
    const text = buf.toString('latin1');
    if (/\r(?!\n)|(?<!\r)\n/.test(text.replace(/\r$/, ''))) return { error: 'bare CR or LF in head' };
    return buf.length > 65_536 ? { error: 'head too long' } : undefined;
  }
  const head = buf.subarray(0, headEnd).toString('latin1');
  if (/\r(?!\n)|(?<!\r)\n/.test(head)) return { error: 'bare CR or LF in head' };
  const lines = head.split('\r\n');
  const m = /^([A-Z]+) (\S+) HTTP\/1\.1$/.exec(lines[0] ?? '');
  if (m === null) return { error: `bad request line ${JSON.stringify(lines[0])}` };
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon);
    const value = trimOws(line.slice(colon + 1));
    if (colon <= 0 || !TOKEN.test(name)) return { error: `bad header line ${JSON.stringify(line)}` };
    if (!/^[\t -~\x80-\xff]*$/.test(value)) return { error: `bad header value ${JSON.stringify(line)}` };
    headers.push([name.toLowerCase(), value]);
  }
  const hosts = headers.filter(([n]) => n === 'host');
  if (hosts.length !== 1) return { error: 'not exactly one Host' };
  const cl = headers.filter(([n]) => n === 'content-length');
  const te = headers.filter(([n]) => n === 'transfer-encoding');
  let at = headEnd + 4;
  const request = (body: Buffer) => ({ method: m[1]!, target: m[2]!, headers, body });
  if (te.length > 0) {
    if (cl.length > 0) return { error: 'Content-Length with Transfer-Encoding' };
    if (te.length > 1 || te[0]![1].toLowerCase() !== 'chunked')
      return { error: `Transfer-Encoding ${JSON.stringify(te.map(([, v]) => v))}` };
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', at);
      const line = buf.subarray(at, lineEnd < 0 ? buf.length : lineEnd).toString('latin1');
      if (line.includes('\n') || line.slice(0, -1).includes('\r'))
        return { error: `bare CR or LF in chunk line ${JSON.stringify(line)}` };
      if (lineEnd < 0) return undefined;
      if (!CHUNK_LINE.test(line)) return { error: `chunk line ${JSON.stringify(line)}` };
      const size = parseInt(line, 16);
      if (size === 0) {
        // Trailer fields, then the empty line.
        let t = lineEnd + 2;
        for (;;) {
          const end = buf.indexOf('\r\n', t);
          if (end < 0) return undefined;
          if (end === t) return { request: request(Buffer.concat(parts)), used: end + 2 };
          const field = buf.subarray(t, end).toString('latin1');
          const colon = field.indexOf(':');
          if (colon <= 0 || !TOKEN.test(field.slice(0, colon)) || /[\r\n]/.test(field))
            return { error: `bad trailer ${JSON.stringify(field)}` };
          t = end + 2;
        }
      }
      if (buf.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
      if (buf.subarray(lineEnd + 2 + size, lineEnd + 4 + size).toString('latin1') !== '\r\n')
        return { error: 'chunk not followed by CRLF' };
      at = lineEnd + 4 + size;
    }
  }
  if (cl.length > 1) return { error: 'repeated Content-Length' };
  if (!/^\d+$/.test(cl[0]?.[1] ?? '0')) return { error: `Content-Length ${JSON.stringify(cl[0]?.[1])}` };
  const length = cl.length === 0 ? 0 : Number(cl[0]![1]);
  if (buf.length < at + length) return undefined;
  return { request: request(buf.subarray(at, at + length)), used: at + length };
}

/** Every request in `buf` read strictly, up to the first error or incomplete request. */
export function parseAllStrict(buf: Buffer): { requests: Omit<ParsedRequest, 'connection'>[]; stop: string } {
  const requests: Omit<ParsedRequest, 'connection'>[] = [];
  for (;;) {
    if (buf.length === 0) return { requests, stop: 'end' };
    const r = parseStrict(buf);
    if (r === undefined) return { requests, stop: 'incomplete' };
    if ('error' in r) return { requests, stop: r.error };
    requests.push(r.request);
    buf = buf.subarray(r.used);
  }
}
