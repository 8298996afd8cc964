/**
 * The reference rows of bench/composition.ts for JSON shaping: what a user would write
 * instead of Portico's field filtering and batched mapping — a node:http proxy in front of an
 * undici Pool (as bench/node-floor.ts) that reads the backend's JSON answer whole, `JSON.parse`s
 * it, edits the objects and `JSON.stringify`s the result. The same rules as the composition routes:
 *
 *   GET /api/records-filtered  GET /records, then per record: `delete passwordHash`,
 *                              `delete address.zip`, `name` renamed `fullName`
 *   GET /api/batched           GET /items?n=100&distinct=100, then the distinct `authorId`s asked
 *                              for in calls of at most 100 to /users?ids=a,b,..., each user
 *                              matched back by its `id` and set as the item's `author`
 *   GET /api/...               anything else: relayed as it is
 *
 * Like Portico it shapes only a 2xx JSON answer and relays any other one; unlike Portico it loses
 * what `JSON.parse` loses (integers past 2^53, number text, escapes), and the renamed field moves
 * to the end of its object (docs/field-filtering.md "Cost" lists the differences).
 * Self-contained (no local imports) so the bench can transpile and run it without tsx.
 * Run: `node node-json-shaping.js BACKEND_URL PORT`; prints `{"ready":true,"port":N}`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const [backend = 'http://127.0.0.1:3000', port = '0'] = process.argv.slice(2);
const pool = new Pool(backend, { connections: 256, pipelining: 1 });
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);
const BATCH_MAX = 100;

type Json = Record<string, unknown>;

/** The request's headers without the hop-by-hop ones. */
function forwardHeaders(req: IncomingMessage): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && v !== undefined) headers[k] = v;
  return headers;
}

/** A GET whose answer is read whole. */
async function get(
  path: string,
  headers: Record<string, string | string[]>,
): Promise<{ status: number; headers: Record<string, string | string[]>; body: Buffer }> {
  const data = await pool.request({ path, method: 'GET', headers });
  const parts: Buffer[] = [];
  for await (const chunk of data.body) parts.push(chunk as Buffer);
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(data.headers)) if (!HOP.has(k) && v !== undefined) out[k] = v;
  return { status: data.statusCode, headers: out, body: Buffer.concat(parts) };
}

const isJson = (headers: Record<string, string | string[]>): boolean =>
  String(headers['content-type'] ?? 'application/json').includes('json');

function filterRecords(body: unknown): unknown {
  const records = Array.isArray(body) ? (body as Json[]) : [body as Json];
  for (const r of records) {
    delete r.passwordHash;
    const address = r.address;
    if (address !== null && typeof address === 'object') delete (address as Json).zip;
    if ('name' in r) {
      r.fullName = r.name;
      delete r.name;
    }
  }
  return body;
}

async function enrichBatched(body: unknown, headers: Record<string, string | string[]>): Promise<unknown> {
  const items = Array.isArray(body) ? (body as Json[]) : [body as Json];
  const values = [...new Set(items.map((i) => i.authorId).filter((v) => v !== undefined && v !== null))];
  const users = new Map<string, unknown>();
  const calls: Promise<void>[] = [];
  for (let k = 0; k < values.length; k += BATCH_MAX) {
    const ids = values
      .slice(k, k + BATCH_MAX)
      .map((v) => encodeURIComponent(String(v)))
      .join(',');
    calls.push(
      get(`/users?ids=${ids}`, {
        accept: 'application/json',
        'x-request-id': String(headers['x-request-id'] ?? ''),
      }).then((answer) => {
        if (answer.status < 200 || answer.status > 299) return;
        for (const u of JSON.parse(answer.body.toString('utf8')) as Json[]) users.set(String(u.id), u);
      }),
    );
  }
  await Promise.all(calls);
  for (const item of items) {
    const user = users.get(String(item.authorId));
    if (user !== undefined) item.author = user;
  }
  return body;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  if (!url.startsWith('/api/')) return void res.writeHead(404).end();
  const headers = forwardHeaders(req);
  const shaping = url === '/api/records-filtered' ? 'filter' : url === '/api/batched' ? 'batch' : undefined;
  const path = shaping === 'filter' ? '/records' : shaping === 'batch' ? '/items?n=100&distinct=100' : url.slice(4);
  const answer = await get(path, headers);
  if (shaping === undefined || answer.status < 200 || answer.status > 299 || !isJson(answer.headers)) {
    res.writeHead(answer.status, answer.headers);
    return void res.end(answer.body);
  }
  const parsed: unknown = JSON.parse(answer.body.toString('utf8'));
  const shaped = shaping === 'filter' ? filterRecords(parsed) : await enrichBatched(parsed, headers);
  const out = Buffer.from(JSON.stringify(shaped));
  delete answer.headers.etag;
  answer.headers['content-length'] = String(out.length);
  res.writeHead(answer.status, answer.headers);
  res.end(out);
}

const server = createServer({ keepAliveTimeout: 72_000 }, (req, res) => {
  handle(req, res).catch(() => {
    if (!res.headersSent) res.writeHead(502).end();
    else res.destroy();
  });
});
server.listen(Number(port), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port }) + '\n');
});
process.on('SIGTERM', () => process.exit(0));
