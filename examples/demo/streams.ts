/**
 * The demo's streaming backends: an SSE ticker and a WebSocket echo (issue #6). The gateway routes
 * `/api/ticker` (isSSE) and `/api/echo` (isWebSocket) to them; see docs/streaming.md.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { WebSocketServer } from 'ws';

/**
 * GET /ticker: one `tick` event a second, numbered with `id:` so a reconnecting client resumes
 * after its `Last-Event-ID`. `?count=N` ends the stream after N events (handy with curl).
 */
export function tickerService(req: IncomingMessage, res: ServerResponse, url: URL): void {
  if (url.pathname !== '/ticker') {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"not found","success":false}');
    return;
  }
  const count = Number(url.searchParams.get('count') ?? 'Infinity');
  const resumeAfter = Number(req.headers['last-event-id'] ?? '0');
  let n = Number.isFinite(resumeAfter) ? resumeAfter : 0;
  const last = n + (Number.isFinite(count) && count > 0 ? count : Infinity);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  // Tell EventSource clients how long to wait before reconnecting.
  res.write('retry: 2000\n\n');
  const timer = setInterval(() => {
    n++;
    res.write(`id: ${n}\nevent: tick\ndata: ${JSON.stringify({ n, time: new Date().toISOString() })}\n\n`);
    if (n >= last) {
      clearInterval(timer);
      res.end();
    }
  }, 1_000);
  res.on('close', () => clearInterval(timer));
}

/** A WebSocket echo server at `ws://host:port/echo`: every message comes back as it was sent. */
export function serveEcho(port: number, host = '127.0.0.1'): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'application/json', upgrade: 'websocket' });
    res.end('{"error":"WebSocket only","success":false}');
  });
  const wss = new WebSocketServer({ server, path: '/echo' });
  wss.on('connection', (ws) => {
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
  });
  server.on('close', () => wss.close());
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
