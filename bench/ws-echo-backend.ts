/**
 * The WebSocket backend of bench/connections.ts: the `ws` package on node:http echoing every
 * message, run as a process of its own so that the tunnels' backend ends hold neither the
 * measured proxy's descriptors nor the clients'. Per-message deflate is off, as most WebSocket
 * servers behind a gateway have it: the tunnel relays frames, it does not compress them.
 *
 *   node ws-echo-backend.mjs [port] [host]     prints `{"ready":true,"port":N}` on stdout
 *
 * Self-contained (only `ws` and node: imports): bench/lib/processes.ts `transpileEntry` runs it
 * without tsx.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

const server = createServer((_req, res) => {
  // A plain GET: the readiness probe of bench/lib/processes.ts and the proxies' health checks.
  res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
});
const wss = new WebSocketServer({ server, perMessageDeflate: false, clientTracking: false });
wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));

// Any loopback address (127.0.0.11...): bench/connections.ts gives each proxy its own.
server.listen(Number(process.argv[2] ?? 0), process.argv[3] ?? '127.0.0.1', 4096, () => {
  process.stdout.write(JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port }) + '\n');
});
process.on('SIGTERM', () => process.exit(0));
