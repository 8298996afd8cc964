/**
 * What the gateway's HTTP/2 request and response objects cost per stream, for callgrind, which
 * counts instructions: repeatable on a loaded machine, where times are not. The public listener
 * (server/public-listener.ts, h2c by prior knowledge) serves a handler that reads what the proxy
 * path reads of every request (method, url, headers, the raw list, the client's address) and
 * answers as the proxy does (a head object with the id, one write, end); ten h2 sessions of the
 * same process send N requests, five streams in flight on each, as h2load does in bench/edge.ts.
 * The same file runs against an older tree (copy it into that tree's bench/micro/), since it
 * uses only the listener's options: the difference of the two counts is the adapter's.
 *
 *   npx esbuild bench/micro/h2-adapter-instructions.ts --bundle --platform=node --format=esm \
 *     --outfile=/tmp/h2a.mjs --banner:js="import { createRequire } from 'module'; const require = createRequire(import.meta.url);"
 *   valgrind --tool=callgrind --dump-before=uv_os_getpriority --callgrind-out-file=/tmp/h2a.out \
 *     node /tmp/h2a.mjs 4000
 *   grep -m1 '^summary:' /tmp/h2a.out.2
 *
 * Part 2 is the N measured requests (after a warm-up, 2,000 unless a second argument says): its
 * summary / N is instructions per request, server and client side both (the client's part is the
 * same for every tree). Without valgrind, the process's CPU time per measured request is printed.
 */
import { getPriority } from 'node:os';
import { connect, type ClientHttp2Session } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPublicListener } from '../../src/server/public-listener.js';
import { stampRequestId } from '../../src/server/gateway-response.js';
import { createLogger } from '../../src/observability/logger.js';

const n = Number(process.argv[2] ?? 4000);
const warmUp = Number(process.argv[3] ?? 2000);
const BODY = Buffer.from(JSON.stringify({ id: 1, name: 'small', items: Array.from({ length: 20 }, (_, i) => i) }));
let sink = 0;

function handler(req: IncomingMessage, res: ServerResponse): void {
  stampRequestId(res, 'req-1');
  sink += (req.method ?? '').length + (req.url ?? '').length + req.rawHeaders.length;
  sink += (req.headers.host ?? '').length + (req.socket.remoteAddress ?? '').length;
  res.once('close', () => sink++);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': BODY.length, 'x-request-id': 'req-1' });
  res.write(BODY);
  res.end();
}

const listener = createPublicListener({
  handler,
  httpOptions: {},
  tls: undefined,
  http2: { enabled: true, cleartext: true, maxConcurrentStreams: 128 },
  maxHeaderBytes: 16_384,
  keepAliveMs: () => 60_000,
  logger: createLogger({ level: 'silent' }),
});

/** `count` requests on `session`, one after the other. */
async function chain(session: ClientHttp2Session, count: number): Promise<void> {
  for (let i = 0; i < count; i++)
    await new Promise<void>((resolve, reject) => {
      const stream = session.request({ ':path': '/api/small', 'user-agent': 'h2a' });
      stream.on('error', reject);
      stream.resume();
      stream.on('end', resolve);
    });
}

/** `total` requests: five chains on each session. */
function load(sessions: readonly ClientHttp2Session[], total: number): Promise<unknown> {
  const per = Math.round(total / (sessions.length * 5));
  return Promise.all(sessions.flatMap((s) => Array.from({ length: 5 }, () => chain(s, per))));
}

listener.server.listen(0, '127.0.0.1', () => {
  const { port } = listener.server.address() as AddressInfo;
  const sessions = Array.from({ length: 10 }, () => connect(`http://127.0.0.1:${port}`));
  void (async () => {
    await load(sessions, warmUp);
    getPriority();
    const before = process.cpuUsage();
    await load(sessions, n);
    const used = process.cpuUsage(before);
    getPriority();
    for (const s of sessions) s.close();
    listener.closeAllConnections();
    listener.server.close();
    const us = (used.user + used.system) / n;
    process.stdout.write(`${n} requests (${sink}): ${us.toFixed(2)} µs of CPU per request\n`);
  })();
});
