/**
 * The static backend of the load benchmark: node:http answering fixed, pre-built bodies
 * so the backend costs as little as possible and every candidate proxies exactly the same bytes.
 *
 *   GET  /small        ~400 B JSON          GET /large       20 KB JSON
 *   POST /echo         reads the body (4 KB in the bench), answers a small JSON
 *   GET  /items?n=N    N items `{ id, userId, authorId, groupId, title }` (the mapping scenario of
 *                      bench/mapping.ts; authorId and groupId take 10 distinct values each, or
 *                      authorId D with `&distinct=D`)
 *   GET  /users/{id}   one small user object        GET /comments?postId=X  two small comments
 *   GET  /users?ids=a,b  the users of a batch, as an array (bench/composition.ts)
 *   GET  /records      ~20 KB JSON: an array of 80 user records with nested fields
 *   GET  /delay/MS/... any of the above, answered after MS milliseconds (a slow service)
 *
 * Run as its own process: `node backend.js [port] [keepAliveMs]` (idle keep-alive connections are
 * kept 120 s unless told); prints `{"ready":true,"port":N}` on stdout.
 * Self-contained (no local imports) so bench/run.ts can transpile and run it without tsx.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A JSON body of exactly `size` bytes, so each scenario's payload size is what its name says. */
export function jsonBody(size: number): Buffer {
  const head = '{"ok":true,"data":"';
  const tail = '"}';
  return Buffer.from(head + 'x'.repeat(Math.max(0, size - head.length - tail.length)) + tail);
}

const SMALL = jsonBody(400);
const LARGE = jsonBody(20 * 1024);
const ITEMS = new Map<string, Buffer>();
const RECORDS = Buffer.from(
  JSON.stringify(
    Array.from({ length: 80 }, (_, i) => ({
      id: 100000 + i,
      name: `User number ${i}`,
      email: `user${i}@example.test`,
      passwordHash: `$2b$12$${'x'.repeat(53)}`,
      address: { street: `${i} Main Street`, city: 'Porto', zip: `40${String(i).padStart(2, '0')}-123` },
      roles: ['reader', i % 3 === 0 ? 'admin' : 'writer'],
    })),
  ),
);

function itemsBody(n: number, distinct = 10): Buffer {
  const key = `${n}/${distinct}`;
  let body = ITEMS.get(key);
  if (body === undefined) {
    const items = Array.from({ length: n }, (_, i) => ({
      id: i + 1,
      userId: (i % 5) + 1,
      authorId: i % distinct,
      groupId: (i * 7) % 10,
      title: `item ${i + 1}`,
    }));
    body = Buffer.from(JSON.stringify(items));
    if (ITEMS.size < 32) ITEMS.set(key, body);
  }
  return body;
}

function send(res: ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}

/** The request handler, exported for in-process use. */
export function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '/';
  const delayed = /^\/delay\/(\d{1,5})(\/.*)$/.exec(url);
  if (delayed !== null) {
    setTimeout(() => answer(req, res, delayed[2]!), Number(delayed[1]));
    return;
  }
  answer(req, res, url);
}

function answer(req: IncomingMessage, res: ServerResponse, url: string): void {
  if (req.method === 'POST') {
    let received = 0;
    req.on('data', (chunk: Buffer) => (received += chunk.length));
    req.on('end', () => send(res, 200, Buffer.from(`{"ok":true,"received":${received}}`)));
    return;
  }
  if (url === '/small') return send(res, 200, SMALL);
  if (url === '/large') return send(res, 200, LARGE);
  if (url === '/records') return send(res, 200, RECORDS);
  if (url.startsWith('/items')) {
    const query = new URL(url, 'http://x').searchParams;
    const n = Number(query.get('n') ?? '10');
    const distinct = Number(query.get('distinct') ?? '10');
    return send(
      res,
      200,
      itemsBody(
        Number.isInteger(n) && n > 0 && n <= 10_000 ? n : 10,
        Number.isInteger(distinct) && distinct > 0 ? distinct : 10,
      ),
    );
  }
  if (url.startsWith('/users?')) {
    const ids = (new URL(url, 'http://x').searchParams.get('ids') ?? '').split(',').filter((id) => id !== '');
    const users = ids.map((id) => ({ id: Number(id), name: `user ${id}`, email: `user${id}@example.test` }));
    return send(res, 200, Buffer.from(JSON.stringify(users)));
  }
  if (url.startsWith('/users/')) {
    const id = url.slice('/users/'.length).split('?')[0] ?? '';
    return send(res, 200, Buffer.from(JSON.stringify({ id, name: `user ${id}`, email: `user${id}@example.test` })));
  }
  if (url.startsWith('/comments')) {
    const postId = new URL(url, 'http://x').searchParams.get('postId') ?? '';
    return send(
      res,
      200,
      Buffer.from(
        JSON.stringify([
          { postId, body: 'Nice post.' },
          { postId, body: 'Agreed.' },
        ]),
      ),
    );
  }
  send(res, 404, Buffer.from('{"ok":false}'));
}

// Started as a process (not imported): listen. Node runs the main module from its real path, so a
// script reached through a symbolic link (a node_modules linked into a worktree) is compared by it.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === realpathSync(resolve(process.argv[1]))) {
  const server = createServer({ keepAliveTimeout: Number(process.argv[3] ?? 120_000) }, handle);
  server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
    process.stdout.write(JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port }) + '\n');
  });
  process.on('SIGTERM', () => process.exit(0));
}
