/**
 * The demo's backend services, each a few lines of node:http so the demo needs nothing but Node.
 * Each listens on its own port, like the separate services a gateway fronts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { comments, categories, posts, products, users } from './data.js';
import { authService } from './auth-service.js';
import { serveEcho, tickerService } from './streams.js';

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function byId<T extends { id: number | string }>(
  list: readonly T[],
  res: ServerResponse,
  id: string | undefined,
  what: string,
): void {
  const item = list.find((x) => String(x.id) === id);
  if (item) sendJson(res, 200, item);
  else sendJson(res, 404, { error: `${what} ${id} not found`, success: false });
}

/** GET /posts, /posts/{id} */
export const postsService: Handler = (_req, res, url) => {
  const m = /^\/posts(?:\/([^/]+))?$/.exec(url.pathname);
  if (!m) return sendJson(res, 404, { error: 'not found', success: false });
  if (m[1] === undefined) return sendJson(res, 200, posts);
  byId(posts, res, m[1], 'post');
};

/** GET /users, /users/{id}, /users?role= */
export const usersService: Handler = (_req, res, url) => {
  const m = /^\/users(?:\/([^/]+))?$/.exec(url.pathname);
  if (!m) return sendJson(res, 404, { error: 'not found', success: false });
  if (m[1] !== undefined) return byId(users, res, m[1], 'user');
  const role = url.searchParams.get('role');
  sendJson(res, 200, role ? users.filter((u) => u.role === role) : users);
};

/** GET /comments?postId= */
export const commentsService: Handler = (_req, res, url) => {
  if (url.pathname !== '/comments') return sendJson(res, 404, { error: 'not found', success: false });
  const postId = url.searchParams.get('postId');
  sendJson(res, 200, postId ? comments.filter((c) => String(c.postId) === postId) : comments);
};

/** GET /products, /products/{id}, /categories/{id}, POST /products (echoes what it got) */
export const shopService: Handler = (req, res, url) => {
  if (req.method === 'POST' && url.pathname === '/products') {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        return sendJson(res, 400, { error: 'body must be JSON', success: false });
      }
      sendJson(res, 201, { id: products.length + 1, ...(body as object) });
    });
    return;
  }
  let m = /^\/products(?:\/([^/]+))?$/.exec(url.pathname);
  if (m) return m[1] === undefined ? sendJson(res, 200, products) : byId(products, res, m[1], 'product');
  m = /^\/categories\/([^/]+)$/.exec(url.pathname);
  if (m) return byId(categories, res, m[1], 'category');
  sendJson(res, 404, { error: 'not found', success: false });
};

export function serve(handler: Handler, port: number, host = '127.0.0.1'): Promise<Server> {
  const server = createServer((req, res) => handler(req, res, new URL(req.url ?? '/', 'http://demo')));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/** Demo service ports with DEMO_BASE_PORT=9101 (run.ts), and `gateway.yaml`'s defaults. */
export const DEMO_PORTS = {
  posts: 9101,
  users: 9102,
  comments: 9103,
  shop: 9104,
  auth: 9105,
  ticker: 9106,
  echo: 9107,
} as const;

export type DemoService = keyof typeof DEMO_PORTS;

/** Starts every demo service; `ports` lets tests use ephemeral ones (0). */
export async function startDemoBackends(
  ports: Record<DemoService, number> = DEMO_PORTS,
): Promise<Record<DemoService, Server>> {
  const [posts, users, comments, shop, auth, ticker, echo] = await Promise.all([
    serve(postsService, ports.posts),
    serve(usersService, ports.users),
    serve(commentsService, ports.comments),
    serve(shopService, ports.shop),
    serve(authService, ports.auth),
    serve(tickerService, ports.ticker),
    serveEcho(ports.echo),
  ]);
  return { posts: posts!, users: users!, comments: comments!, shop: shop!, auth: auth!, ticker: ticker!, echo: echo! };
}
