/**
 * The ceiling of a cache hit: plain node:http answering from memory, with no backend, no cache
 * look-up and nothing per request but the answer. It sends what a Portico hit sends for the
 * bench's bodies (bench/cache.ts), the stored fields, the length, Age and Cache-Status, from one
 * Buffer per body read at start, so a hit row's distance to it is what the gateway's own work
 * costs (request id, routing, the route's layers, the look-up, the report).
 * Run: `node node-memory.js DIR [port]`, DIR holding small.json and large.json, served as
 * /api/small and /api/large; prints `{"ready":true,"port":N}`.
 */
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

const dir = process.argv[2] ?? '.';
const bodies = new Map<string, Buffer>(
  ['small', 'large'].map((name) => [`/api/${name}`, readFileSync(join(dir, `${name}.json`))]),
);
const date = new Date().toUTCString();

const server = createServer({ keepAliveTimeout: 72_000 }, (req, res) => {
  const body = bodies.get(req.url ?? '/');
  if (body === undefined) return void res.writeHead(404).end();
  // An object literal per answer, as a plain server writes it (not spread from a shared one).
  res.writeHead(200, {
    'content-type': 'application/json',
    'cache-control': 'public, max-age=3600',
    date,
    'content-length': body.length,
    age: '0',
    'cache-status': 'node; hit',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
});

server.listen(Number(process.argv[3] ?? 0), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port }) + '\n');
});
process.on('SIGTERM', () => process.exit(0));
