/**
 * Rolling restarts of a fleet, as docs/deploy.md "Rolling restarts" recommends running one: nginx
 * (Debian's, `.ci/run` installs it) in front of two `portico start` processes sharing rate limits
 * through a real redis-server, loaded by GET and POST clients and by SSE and WebSocket clients
 * that reconnect, and an HTTP/2 client connected to one replica directly. Every replica is stopped
 * with SIGTERM and started again, one after the other: no GET or POST may fail, every stream ends
 * cleanly (WebSocket: close 1001), the HTTP/2 client gets GOAWAY and no stream is reset after it
 * was processed, and a client's shared rate limit outlives the restarts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as h2connect, constants, type ClientHttp2Session } from 'node:http2';
import { request } from 'undici';
import { startBackend, json, type TestBackend } from '../support/backend.js';
import { startWsBackend, type WsBackend } from '../support/ws-backend.js';
import { freePort, startRedis, type TestRedis } from '../support/redis.js';
import {
  Replica,
  rollingRestarts,
  startFleetNginx,
  startHttpLoad,
  startSseClient,
  startWsClient,
  type FleetNginx,
} from '../support/fleet.js';

/**
 * What docs/deploy.md recommends behind nginx, which reads no readiness: no drain delay (new
 * connections during one would only race the listener's close) and replicas never marked down.
 */
const DRAIN_DELAY_SEC = 0;
const NGINX_SERVER_PARAMS = 'max_fails=0';
const RESTARTS = 4;

function replicaConfig(backend: TestBackend, ws: WsBackend, redis: TestRedis): string {
  return `
config:
  shutdown: { drainDelaySec: ${DRAIN_DELAY_SEC} }
  http2: { cleartext: true }
  trustProxy: [loopback]
  redis: { url: "${redis.url}" }
  rateLimit: { store: redis }
routes:
  - { method: GET, route: /items, service: ${backend.host}, path: /items, rateLimit: { enabled: false } }
  - { method: POST, route: /orders, service: ${backend.host}, path: /orders, rateLimit: { enabled: false } }
  - { method: GET, route: /events, service: ${backend.host}, path: /events, isSSE: true, rateLimit: { enabled: false } }
  - { method: GET, route: /ws, service: ${ws.host}, path: /ws, isWebSocket: true, rateLimit: { enabled: false } }
  - { method: GET, route: /limited, service: ${backend.host}, path: /items, rateLimit: { requestsPerSec: 0.001, burst: 3 } }
`;
}

/**
 * An HTTP/2 client connected straight to one replica, one request after another: a new session
 * after a GOAWAY; a stream refused unprocessed (REFUSED_STREAM, or no connection while the replica
 * restarts) is sent again; any other end of a stream without its answer is a failure.
 */
function startH2Client(port: number) {
  const seen = { ok: 0, goaways: 0, retried: 0, failures: [] as string[] };
  let running = true;
  let session: ClientHttp2Session | undefined;
  /** What each session's GOAWAY said was the last stream processed, and whether it ever connected. */
  const state = new WeakMap<ClientHttp2Session, { connected: boolean; lastProcessed: number }>();
  const fresh = () => {
    const s = h2connect(`http://127.0.0.1:${port}`);
    const st = { connected: false, lastProcessed: Infinity };
    state.set(s, st);
    s.on('error', () => {});
    s.once('connect', () => (st.connected = true));
    s.once('goaway', (code: number, lastStreamID: number) => {
      seen.goaways++;
      st.lastProcessed = lastStreamID;
      if (code !== constants.NGHTTP2_NO_ERROR) seen.failures.push(`GOAWAY ${code}`);
      if (session === s) session = undefined;
    });
    s.once('close', () => session === s && (session = undefined));
    return s;
  };
  const one = () =>
    new Promise<void>((resolve) => {
      const s = (session ??= fresh());
      const stream = s.request({ ':path': '/api/items' });
      let status = 0;
      stream.on('response', (h) => (status = Number(h[':status'])));
      stream.resume();
      stream.on('end', () => {
        if (status === 200) seen.ok++;
        else seen.failures.push(`status ${status}`);
        resolve();
      });
      stream.on('error', () => {
        const st = state.get(s)!;
        // Never sent (no connection: the replica is restarting), or refused unprocessed: sent again.
        const unprocessed =
          !st.connected || stream.rstCode === constants.NGHTTP2_REFUSED_STREAM || (stream.id ?? 0) > st.lastProcessed;
        if (status === 0 && unprocessed) seen.retried++;
        else seen.failures.push(`stream ${stream.id} reset ${stream.rstCode} after status ${status}`);
        if (session === s) session = undefined;
        setTimeout(resolve, 20);
      });
    });
  const loop = (async () => {
    while (running) await one();
  })();
  return Object.assign(seen, {
    async stop() {
      running = false;
      await loop;
      session?.close();
    },
  });
}

describe('rolling restarts behind nginx', { timeout: 120_000 }, () => {
  let backend: TestBackend;
  let ws: WsBackend;
  let redis: TestRedis;
  let nginx: FleetNginx;
  const replicas: Replica[] = [];

  before(async () => {
    backend = await startBackend((req, res) => {
      if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const timer = setInterval(() => res.write('data: tick\n\n'), 100);
        res.write('data: first\n\n');
        res.on('close', () => clearInterval(timer));
        return;
      }
      json(res, 200, { ok: true });
    });
    ws = await startWsBackend();
    redis = await startRedis();
    const file = join(mkdtempSync(join(tmpdir(), 'portico-fleet-')), 'gateway.yaml');
    writeFileSync(file, replicaConfig(backend, ws, redis));
    for (const port of [await freePort(), await freePort()]) replicas.push(new Replica(port, file));
    await Promise.all(replicas.map((r) => r.start()));
    nginx = await startFleetNginx(
      replicas.map((r) => r.port),
      { serverParams: NGINX_SERVER_PARAMS },
    );
  });

  after(async () => {
    for (const r of replicas) r.kill();
    await nginx?.stop();
    await redis?.stop();
    await ws?.close();
    await backend?.close();
  });

  it('loses no GET or POST, ends streams cleanly, honours GOAWAY, keeps shared rate limits', async () => {
    const limited = () =>
      request(`${nginx.url}/api/limited`, { headers: { 'x-forwarded-for': '203.0.113.7' } }).then(async (r) => {
        await r.body.dump();
        return r.statusCode;
      });
    // The client spends its burst before the restarts.
    assert.deepEqual([await limited(), await limited(), await limited()], [200, 200, 200]);
    assert.equal(await limited(), 429);

    const load = startHttpLoad(nginx.url, 6, 6);
    const sse = [startSseClient(nginx.url), startSseClient(nginx.url)];
    const h2 = startH2Client(replicas[0]!.port);
    const sockets = [
      startWsClient(nginx.url.replace('http:', 'ws:')),
      startWsClient(nginx.url.replace('http:', 'ws:')),
    ];
    let stops: number[] = [];
    try {
      stops = await rollingRestarts(replicas, RESTARTS);
    } finally {
      await load.stop();
      await Promise.all([...sse, ...sockets, h2].map((c) => c.stop()));
    }
    // Refused connections to a stopped replica are retried by nginx: the other lines tell what failed.
    const errors = nginx
      .errors()
      .split('\n')
      .filter((l) => l !== '' && !l.includes('Connection refused'));
    const context = `\nGET ${JSON.stringify(load.get)}\nPOST ${JSON.stringify(load.post)}\nnginx:\n${errors.slice(-10).join('\n')}`;
    assert.ok(load.get.ok > 0 && load.post.ok > 0, `traffic flowed${context}`);
    assert.equal(load.get.failed, 0, `failed GETs${context}`);
    assert.equal(load.post.failed, 0, `failed POSTs${context}`);
    for (const c of sse) {
      assert.deepEqual(c.brokenEnds, [], 'SSE ends without a clean end');
      assert.ok(
        c.refused.every((status) => status === 503),
        `refused: ${c.refused.join(', ')}`,
      );
      assert.ok(c.cleanEnds.length >= 1 && c.opened > c.cleanEnds.length - 1, 'SSE streams ended and reopened');
    }
    for (const c of sockets) {
      assert.deepEqual(c.brokenEnds, [], 'WebSocket ends without a close frame');
      // A handshake that reached a replica which stopped accepting was refused (503), then retried.
      assert.ok(
        c.refused.every((status) => status === 503),
        `refused: ${c.refused.join(', ')}`,
      );
      assert.ok(c.cleanEnds.length >= 1, 'WebSocket closed by a restart');
      assert.deepEqual([...new Set(c.cleanEnds)], [1001]);
      assert.ok(c.opened > c.cleanEnds.length, 'WebSocket reconnected after each close');
    }
    assert.ok(h2.goaways >= 1, `HTTP/2: GOAWAY seen (${h2.goaways})`);
    assert.deepEqual(h2.failures, [], 'HTTP/2 streams reset or failed');
    assert.ok(h2.ok > 0);
    for (const ms of stops)
      assert.ok(ms < DRAIN_DELAY_SEC * 1000 + 3_000, `a replica took ${Math.round(ms)} ms to stop`);
    assert.equal(await limited(), 429, 'the shared bucket outlived the restarts');
  });
});
