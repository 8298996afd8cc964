import type { ServerResponse } from 'node:http';

const OK = Buffer.from('{"status":"ok"}');
const READY = Buffer.from('{"status":"ready"}');
const DRAINING = Buffer.from('{"status":"draining"}');
const WAITING_FOR_REDIS = Buffer.from('{"status":"waiting for redis"}');

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

/**
 * GET /ready: 200 while serving, 503 while draining on shutdown (readiness), and 503 while
 * `redis.required` is set and Redis is not connected.
 */
export function sendReady(res: ServerResponse, draining: boolean, waitingForRedis = false): void {
  if (draining) json(res, 503, DRAINING);
  else if (waitingForRedis) json(res, 503, WAITING_FOR_REDIS);
  else json(res, 200, READY);
}
