/**
 * An open-loop load generator: requests sent at a constant rate whatever the answers do, each
 * latency counted from the moment its request was due (not from when it went out), so a slow
 * answer delays no later measurement and a stall of the server shows in every request it held
 * back (no coordinated omission). Run as a process of its own by bench/lib/open-loop.ts:
 *
 *   node open-loop-client.mjs --url URL --rate N --seconds S [--connections C] [--method POST]
 *        [--body-file FILE] [--header name:value]...
 *
 * Prints one line `OPEN_LOOP_JSON {...}` with the count, p50, p99, p99.9 and max in ms, the
 * errors (no answer) and the answers outside 2xx/3xx. Self-contained (only node: imports):
 * bench/lib/processes.ts `transpileEntry` runs it without tsx.
 *
 * HTTP/1.1 on plain sockets, one request at a time per connection: the request's bytes are made
 * once, and an answer is framed by its Content-Length or chunks and never parsed further. With
 * undici (Pool.request, a promise and a body stream per request) the client's own pauses were the
 * p99: against nginx answering 11 bytes at 1,300 req/s, 4-33 ms from one run to the next, where
 * this client sees under 1 ms (docs/performance.md "Scale in routes").
 */
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    method: { type: 'string', default: 'GET' },
    'body-file': { type: 'string' },
    header: { type: 'string', multiple: true, default: [] },
  },
});

const url = new URL(values.url ?? '');
if (url.protocol !== 'http:') throw new Error(`open-loop client: only http: URLs (${url.href})`);
const port = Number(url.port || 80);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const maxConnections = Number(values.connections);
const method = values.method ?? 'GET';
const body = values['body-file'] === undefined ? undefined : readFileSync(values['body-file']);
const head = [`${method} ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`];
for (const h of values.header ?? []) {
  const at = h.indexOf(':');
  head.push(`${h.slice(0, at).trim()}: ${h.slice(at + 1).trim()}`);
}
if (body !== undefined) head.push(`content-length: ${body.length}`);
const request = Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), body ?? Buffer.alloc(0)]);
const noBody = method === 'HEAD';

const total = Math.round(rate * seconds);
const latencies = new Float64Array(total);
let done = 0;
let errors = 0;
let badStatus = 0;
let resolveAll: () => void = () => {};
const all = new Promise<void>((r) => (resolveAll = r));

function finish(i: number, dueAt: number, failed: boolean): void {
  latencies[i] = failed ? Number.NaN : performance.now() - dueAt;
  if (failed) errors++;
  if (++done === total) resolveAll();
}

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
/** Where the framing of the answer under way is. */
const Read = { Head: 0, Length: 1, ChunkSize: 2, ChunkData: 3, Trailer: 4, UntilClose: 5 } as const;

/** One keep-alive connection, one request at a time. */
class Connection {
  readonly socket: Socket;
  private pending: Buffer | undefined;
  private state: number = Read.Head;
  private remaining = 0;
  private closeAfter = false;
  /** The request under way (-1: none) and when it was due. */
  private current = -1;
  private dueAt = 0;

  constructor() {
    this.socket = connect({ host: url.hostname, port, noDelay: true });
    this.socket.on('data', (chunk: Buffer) => this.read(chunk));
    this.socket.on('error', () => {});
    this.socket.on('close', () => this.closed());
  }

  send(i: number, dueAt: number): void {
    this.current = i;
    this.dueAt = dueAt;
    this.state = Read.Head;
    this.socket.write(request);
  }

  private read(chunk: Buffer): void {
    const buf = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = undefined;
    let at = 0;
    while (at < buf.length && this.current >= 0) {
      if (this.state === Read.Head) {
        const end = buf.indexOf(HEAD_END, at);
        if (end < 0) break;
        this.head(buf.toString('latin1', at, end));
        at = end + 4;
      } else if (this.state === Read.Length || this.state === Read.ChunkData || this.state === Read.UntilClose) {
        const take = Math.min(this.remaining, buf.length - at);
        at += take;
        this.remaining -= take;
        if (this.state === Read.UntilClose) this.remaining = Infinity;
        else if (this.remaining === 0) {
          if (this.state === Read.Length) this.answered();
          else this.state = Read.ChunkSize;
        }
      } else {
        const end = buf.indexOf(CRLF, at);
        if (end < 0) break;
        if (this.state === Read.ChunkSize) {
          const size = parseInt(buf.toString('latin1', at, end).split(';', 1)[0]!, 16);
          if (Number.isNaN(size)) return void this.socket.destroy();
          this.state = size === 0 ? Read.Trailer : Read.ChunkData;
          this.remaining = size + 2; // the data and its CRLF
        } else if (end === at) {
          at = end + 2;
          this.answered();
          continue;
        }
        at = end + 2;
      }
    }
    if (at < buf.length && this.current >= 0) this.pending = buf.subarray(at);
  }

  /** The status line and headers of an answer: how its body is framed. */
  private head(text: string): void {
    const status = Number(text.slice(9, 12));
    if (status >= 100 && status < 200) return; // 100 Continue: the answer follows
    if (status >= 400 || !(status >= 200)) badStatus++;
    let length = -1;
    let chunked = false;
    this.closeAfter = false;
    for (const line of text.split('\r\n').slice(1)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line
        .slice(colon + 1)
        .trim()
        .toLowerCase();
      if (name === 'content-length') length = Number(value);
      else if (name === 'transfer-encoding') chunked = value.endsWith('chunked');
      else if (name === 'connection') this.closeAfter = value.includes('close');
    }
    if (noBody || status === 204 || status === 304) return void this.answered();
    if (chunked) this.state = Read.ChunkSize;
    else if (length >= 0) {
      this.state = Read.Length;
      this.remaining = length;
      if (length === 0) this.answered();
    } else {
      this.state = Read.UntilClose;
      this.remaining = Infinity;
      this.closeAfter = true;
    }
  }

  private answered(): void {
    const i = this.current;
    this.current = -1;
    this.state = Read.Head;
    finish(i, this.dueAt, false);
    if (this.closeAfter) this.socket.destroy();
    else released(this);
  }

  private closed(): void {
    open.delete(this);
    const i = this.current;
    this.current = -1;
    // An answer read until the close is complete; any other cut short is an error.
    if (i >= 0) finish(i, this.dueAt, this.state !== Read.UntilClose);
    const k = idle.indexOf(this);
    if (k >= 0) idle.splice(k, 1);
    if (waiting.length > 0 && open.size < maxConnections) released(new Connection(), true);
  }
}

const open = new Set<Connection>();
const idle: Connection[] = [];
/** Requests due while every connection was busy: [index, due time], oldest first. */
const waiting: number[] = [];

/** A connection free for the next request, which the oldest waiting one takes. */
function released(c: Connection, isNew = false): void {
  if (isNew) open.add(c);
  if (waiting.length > 0) {
    const i = waiting.shift()!;
    const dueAt = waiting.shift()!;
    c.send(i, dueAt);
  } else idle.push(c);
}

function send(i: number, dueAt: number): void {
  const c = idle.pop();
  if (c !== undefined) return c.send(i, dueAt);
  waiting.push(i, dueAt);
  if (open.size < maxConnections) released(new Connection(), true);
}

const start = performance.now();
let sent = 0;
// A 1 ms tick sends every request due since the last one, each with its own due time: request k
// is due at k / rate, so k + 1 are due at t (request 0 at 0; counting floor(t * rate) sent each one
// an interval late, which every latency then counted).
const tick = setInterval(() => {
  const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
  for (; sent < due; sent++) send(sent, start + (sent * 1000) / rate);
  if (sent === total) clearInterval(tick);
}, 1);
if (total === 0) resolveAll();
await all;
for (const c of open) c.socket.destroy();

const ok = Array.from(latencies).filter((x) => !Number.isNaN(x));
ok.sort((a, b) => a - b);
const at = (q: number) => (ok.length === 0 ? 0 : ok[Math.min(ok.length - 1, Math.ceil(q * ok.length) - 1)]!);
const round = (x: number) => Math.round(x * 1000) / 1000;
process.stdout.write(
  `OPEN_LOOP_JSON ${JSON.stringify({
    requests: total,
    durationSec: (performance.now() - start) / 1000,
    p50Ms: round(at(0.5)),
    p99Ms: round(at(0.99)),
    p999Ms: round(at(0.999)),
    maxMs: round(at(1)),
    errors,
    badStatus,
  })}\n`,
);
