/**
 * The demo as the README drives it: examples/demo/gateway.yaml with the bundled demo backends
 * (on ephemeral ports through the file's ${..._SERVICE} overrides), through the real gateway.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { WebSocket } from 'ws';
import { startDemoBackends, type DemoService } from '../../examples/demo/backends.js';
import { startGateway, type TestGateway } from '../support/gateway.js';

const ENV_NAMES: Record<DemoService, string> = {
  posts: 'POSTS_SERVICE',
  users: 'USERS_SERVICE',
  comments: 'COMMENTS_SERVICE',
  shop: 'SHOP_SERVICE',
  auth: 'AUTH_SERVICE',
  ticker: 'TICKER_SERVICE',
  echo: 'ECHO_SERVICE',
};

describe('the demo (npm start)', () => {
  let backends: Record<DemoService, Server>;
  let gw: TestGateway;
  before(async () => {
    backends = await startDemoBackends({ posts: 0, users: 0, comments: 0, shop: 0, auth: 0, ticker: 0, echo: 0 });
    const env: NodeJS.ProcessEnv = {};
    for (const [name, server] of Object.entries(backends))
      env[ENV_NAMES[name as DemoService]] = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    gw = await startGateway(readFileSync(new URL('../../examples/demo/gateway.yaml', import.meta.url), 'utf8'), env);
  });
  after(async () => {
    await gw?.close();
    for (const s of Object.values(backends ?? {})) {
      s.closeAllConnections();
      s.close();
    }
  });

  it('GET /api/posts answers the posts enriched with author and comments', async () => {
    const res = await request(`${gw.url}/api/posts`);
    assert.equal(res.statusCode, 200);
    const posts = (await res.body.json()) as Record<string, unknown>[];
    assert.equal(posts.length, 4);
    assert.deepEqual(posts[0], {
      id: 1,
      title: 'Notes on the Analytical Engine',
      author: { id: 1, name: 'Ada Lovelace', email: 'ada@example.com', role: 'admin' },
      comments: [
        { id: 1, postId: 1, body: 'A classic.' },
        { id: 2, postId: 1, body: 'Still relevant.' },
      ],
    });
  });

  it('matches the README: /api/posts/2', async () => {
    const res = await request(`${gw.url}/api/posts/2`);
    assert.equal(
      await res.body.text(),
      '{"id":2,"title":"On Computable Numbers","author":{"id":2,"name":"Alan Turing","email":"alan@example.com","role":"editor"},"comments":[{"id":3,"postId":2,"body":"Halting!"}]}',
    );
  });

  it('login, call with the token, call without (README "Authentication")', async () => {
    const login = await request(`${gw.url}/api/auth/login`, {
      method: 'POST',
      body: '{"username":"ada","password":"lovelace"}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(login.statusCode, 200);
    const { token } = (await login.body.json()) as { token: string };
    let res = await request(`${gw.url}/api/me`, {
      headers: { authorization: `Bearer ${token}`, 'x-role': 'superuser' },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(await res.body.json(), { userId: '1', username: 'ada', role: 'admin', email: 'ada@example.com' });
    res = await request(`${gw.url}/api/me`);
    assert.equal(res.statusCode, 401);
    assert.deepEqual(await res.body.json(), {
      error: 'Missing bearer token: POST /api/auth/login first',
      success: false,
    });
  });

  it('streams the ticker and echoes over WebSocket', async () => {
    const res = await request(`${gw.url}/api/ticker?count=2`);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    const text = await res.body.text();
    assert.equal((text.match(/^data:/gm) ?? []).length, 2);

    const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/api/echo`);
    const echoed = await new Promise<string>((resolve, reject) => {
      ws.once('open', () => ws.send('hello portico'));
      ws.once('message', (data) => resolve(String(data)));
      ws.once('error', reject);
    });
    ws.close();
    assert.equal(echoed, 'hello portico');
  });
});

describe('npm start on a busy machine', () => {
  const run = (env: NodeJS.ProcessEnv) =>
    spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('../../examples/demo/run.ts', import.meta.url))],
      {
        env: { ...process.env, PORT: '0', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );

  it('the backends take free ports and the demo prints where each listens', async () => {
    const child = run({});
    let out = '';
    child.stdout.setEncoding('utf8');
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (d: string) => {
        out += d;
        if (/echo +127\.0\.0\.1:\d+\n/.test(out)) resolve();
      }),
    );
    child.kill('SIGKILL');
    assert.match(out, /^Portico demo backends:\n {2}posts +127\.0\.0\.1:\d+\n {2}users /);
    assert.doesNotMatch(out, /:910\d\n/);
  });

  it('a busy DEMO_BASE_PORT is one line naming the port and what to do, exit 1', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    const child = run({ DEMO_BASE_PORT: String(port) });
    let err = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => (err += d));
    const [code] = (await once(child, 'exit')) as [number];
    busy.close();
    assert.equal(code, 1);
    assert.equal(
      err,
      `portico demo: port ${port} is busy: choose another DEMO_BASE_PORT, or unset it for free ports\n`,
    );
  });
});
