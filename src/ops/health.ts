import type { ServerResponse } from 'node:http';

const OK = Buffer.from('{"status":"ok"}');
const READY = Buffer.from('{"status":"ready"}');
const DRAINING = Buffer.from('{"status":"draining"}');

function json(res: ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': body.length,
    'cache-control': 'no-store',
  });
  res.end(body);
}

/** GET /health: the process is alive (Kubernetes liveness). */
export function sendHealth(res: ServerResponse): void {
  json(res, 200, OK);
}

/** GET /ready: 200 while serving, 503 while draining on shutdown (readiness). */
export function sendReady(res: ServerResponse, draining: boolean): void {
  json(res, draining ? 503 : 200, draining ? DRAINING : READY);
}
