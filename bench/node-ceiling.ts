/**
 * The Node ceiling: the fastest proxy this stack allows, as far as the work on the hot path found. node:http
 * in front of an undici Pool driven by a bare dispatch handler (no Pool.stream() AbortController,
 * AsyncResource or finished()), the response head built from undici's raw header list straight
 * into writeHead's object, no logging, ids, tracing, limits or circuit, and run with the V8 flags
 * Portico applies to itself (bench/lib/candidates.ts passes them). Portico's distance to this row
 * is what all its features cost; its row cannot pass this one by much.
 * Run: `node node-ceiling.js BACKEND_URL [port]`; prints `{"ready":true,"port":N}`.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool, type Dispatcher } from 'undici';

const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
]);
const pool = new Pool(process.argv[2] ?? 'http://127.0.0.1:3000', { connections: 64, pipelining: 1 });

class Call implements Dispatcher.DispatchHandler {
  abortCall: ((err?: Error) => void) | undefined;
  resumeCall: (() => void) | undefined;
  readonly onDrain = () => this.resumeCall?.();
  constructor(private readonly res: ServerResponse) {}

  onConnect(abort: (err?: Error) => void): void {
    this.abortCall = abort;
  }

  onHeaders(statusCode: number, raw: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true;
    this.resumeCall = resume;
    const out: Record<string, string | string[]> = {};
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!.toString('latin1').toLowerCase();
      if (HOP.has(name) || name === '__proto__') continue;
      const seen = out[name];
      const value = raw[i + 1]!.toString('latin1');
      if (seen === undefined) out[name] = value;
      else if (typeof seen === 'string') out[name] = [seen, value];
      else seen.push(value);
    }
    this.res.writeHead(statusCode, out);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.res.write(chunk)) return true;
    this.res.once('drain', this.onDrain);
    return false;
  }

  onComplete(): void {
    this.res.end();
  }

  onError(): void {
    if (this.res.headersSent) this.res.destroy();
    else this.res.writeHead(502).end();
  }
}

const server = createServer({ keepAliveTimeout: 72_000 }, (req, res) => {
  const url = req.url ?? '/';
  if (!url.startsWith('/api/')) return void res.writeHead(404).end();
  const call = new Call(res);
  res.once('close', () => {
    if (!res.writableFinished) call.abortCall?.(new Error('client left'));
  });
  const h = req.headers;
  const headers: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (!HOP.has(req.rawHeaders[i]!.toLowerCase())) headers.push(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  }
  pool.dispatch(
    {
      path: url.slice(4),
      method: req.method as Dispatcher.HttpMethod,
      headers,
      body: h['content-length'] !== undefined || h['transfer-encoding'] !== undefined ? req : null,
    },
    call,
  );
});

server.listen(Number(process.argv[3] ?? 0), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port }) + '\n');
});
process.on('SIGTERM', () => process.exit(0));
