import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders, type ClientRequest, type ServerResponse } from 'node:http';
import { closedPort, json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';

/** Wall-clock milliseconds with sub-millisecond precision, comparable across the test process. */
const now = () => performance.timeOrigin + performance.now();

interface SseEvent {
  readonly data: string;
  readonly id: string | undefined;
  readonly arrivedAt: number;
}

interface SseClient {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly events: SseEvent[];
  /** Resolves when `n` events arrived (bounded: rejects after `ms`). */
  waitFor(n: number, ms?: number): Promise<void>;
  /** Resolves when the response ended (the backend closed the stream). */
  readonly ended: Promise<void>;
  readonly req: ClientRequest;
}

/** Opens an SSE stream with node:http (no client-side buffering) and parses events as they arrive. */
function openStream(url: string, path: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: u.hostname, port: u.port, path, headers: { accept: 'text/event-stream', ...headers }, agent: false },
      (res) => {
        const events: SseEvent[] = [];
        const waiters: (() => void)[] = [];
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const arrivedAt = now();
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let data = '';
            let id: string | undefined;
            for (const line of block.split('\n')) {
              if (line.startsWith('data: ')) data += line.slice(6);
              else if (line.startsWith('id: ')) id = line.slice(4);
            }
            events.push({ data, id, arrivedAt });
          }
          for (const w of waiters.splice(0)) w();
        });
        const ended = new Promise<void>((r) => res.on('end', r));
        ended.catch(() => {});
        res.on('error', () => {});
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          events,
          req,
          ended,
          waitFor(n, ms = 3_000) {
            return new Promise((ok, fail) => {
              const timer = setTimeout(
                () => fail(new Error(`only ${events.length} of ${n} events after ${ms} ms`)),
                ms,
              );
              const check = () => {
                if (events.length >= n) {
                  clearTimeout(timer);
                  ok();
                } else waiters.push(check);
              };
              check();
            });
          },
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Bounded wait for a promise that an event resolves. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms).unref()),
  ]);
}

function sseHead(res: ServerResponse, extra: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...extra });
  res.flushHeaders();
}

describe('SSE routes stream events without buffering', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let silentPort: number;
  /** Server-side `close` of each stream the backend served, by request path. */
  const backendClosed = new Map<string, Promise<number>>();
  let releaseHeld: (() => void) | undefined;

  before(async () => {
    backend = await startBackend((req, res) => {
      const url = new URL(req.url ?? '/', 'http://backend');
      backendClosed.set(url.pathname, new Promise((r) => res.on('close', () => r(now()))));
      switch (url.pathname) {
        case '/ticker': {
          // Five events 200 ms apart, each stamped with the moment it is written; then end.
          sseHead(res);
          let i = 0;
          const tick = () => {
            i++;
            res.write(`id: ${i}\ndata: ${JSON.stringify({ i, writtenAt: now() })}\n\n`);
            if (i < 5) setTimeout(tick, 200);
            else setTimeout(() => res.end(), 200);
          };
          setTimeout(tick, 200);
          return;
        }
        case '/held':
          // Headers now, first event only when the test says so.
          sseHead(res);
          releaseHeld = () => res.write('data: released\n\n');
          return;
        case '/forever':
          sseHead(res);
          res.write('data: first\n\n');
          return;
        case '/two-then-end':
          sseHead(res);
          res.write('data: one\n\n');
          res.write('data: two\n\n');
          res.end();
          return;
        case '/slow-events':
          // Silence longer than timeouts.backendSec between two events.
          sseHead(res);
          res.write('data: before\n\n');
          setTimeout(() => res.end('data: after\n\n'), 900);
          return;
        case '/echo-request':
          sseHead(res);
          res.end(
            `data: ${JSON.stringify({ url: req.url, lastEventId: req.headers['last-event-id'], acceptEncoding: req.headers['accept-encoding'] })}\n\n`,
          );
          return;
        case '/not-found':
          return json(res, 404, { error: 'no such topic', success: false });
        case '/no-head':
          return; // never answers
        default:
          return json(res, 500, { unexpected: req.url });
      }
    });
    silentPort = await closedPort();
    gw = await startGateway(`
routes:
  - { method: GET, route: /ticker, service: ${backend.host}, path: /ticker, isSSE: true }
  - { method: GET, route: "/streams/{name}", service: ${backend.host}, path: "/{name}", isSSE: true }
  - { method: GET, route: "/topics/{topic}/events", service: ${backend.host}, path: "/echo-request?topic={topic}",
      isSSE: true }
  - { method: GET, route: /down, service: 127.0.0.1:${silentPort}, path: /events, isSSE: true }
config:
  timeouts:
    backendSec: 0.3
`);
  });
  after(() => closeAll(gw, backend));

  it('delivers each of 5 events written 200 ms apart within 50 ms of being written', async () => {
    const stream = await openStream(gw.url, '/api/ticker');
    assert.equal(stream.status, 200);
    await stream.waitFor(5, 5_000);
    await within(stream.ended, 2_000, 'end of stream');
    const delays = stream.events.map((e) => e.arrivedAt - (JSON.parse(e.data) as { writtenAt: number }).writtenAt);
    assert.deepEqual(
      stream.events.map((e) => e.id),
      ['1', '2', '3', '4', '5'],
    );
    for (const [i, d] of delays.entries())
      assert.ok(
        d < 50,
        `event ${i + 1} arrived ${d.toFixed(1)} ms after it was written (${delays.map((x) => x.toFixed(1)).join(', ')})`,
      );
    // Each event arrived before the next was written: nothing waited for the stream to end.
    for (let i = 1; i < 5; i++)
      assert.ok(
        stream.events[i - 1]!.arrivedAt < (JSON.parse(stream.events[i]!.data) as { writtenAt: number }).writtenAt,
      );
  });

  it('sends the response head before the first event, with X-Accel-Buffering: no and the backend headers', async () => {
    const stream = await within(openStream(gw.url, '/api/streams/held'), 2_000, 'response head');
    assert.equal(stream.status, 200);
    assert.equal(stream.headers['content-type'], 'text/event-stream');
    assert.equal(stream.headers['cache-control'], 'no-cache');
    assert.equal(stream.headers['x-accel-buffering'], 'no');
    assert.equal(stream.headers['content-encoding'], undefined);
    assert.equal(typeof stream.headers['x-request-id'], 'string');
    assert.equal(stream.events.length, 0);
    releaseHeld!();
    await stream.waitFor(1);
    assert.equal(stream.events[0]!.data, 'released');
    stream.req.destroy();
  });

  it('forwards path parameters, the query and Last-Event-ID, and asks the backend not to compress', async () => {
    const stream = await openStream(gw.url, '/api/topics/news/events?since=5&x=a%20b', {
      'last-event-id': '42',
      'accept-encoding': 'gzip, br',
    });
    await stream.waitFor(1);
    await within(stream.ended, 2_000, 'end of stream');
    assert.deepEqual(JSON.parse(stream.events[0]!.data), {
      url: '/echo-request?topic=news&since=5&x=a%20b',
      lastEventId: '42',
      acceptEncoding: 'identity',
    });
  });

  it('closes the backend stream at once when the client leaves', async () => {
    const stream = await openStream(gw.url, '/api/streams/forever');
    await stream.waitFor(1);
    const left = now();
    stream.req.destroy();
    const closedAt = await within(backendClosed.get('/forever')!, 2_000, 'backend close');
    assert.ok(
      closedAt - left < 1_000,
      `backend saw the close ${(closedAt - left).toFixed(0)} ms after the client left`,
    );
  });

  it('ends the client response when the backend ends the stream', async () => {
    const stream = await openStream(gw.url, '/api/streams/two-then-end');
    await within(stream.ended, 2_000, 'end of stream');
    assert.deepEqual(
      stream.events.map((e) => e.data),
      ['one', 'two'],
    );
  });

  it('has no body timeout: a silence longer than timeouts.backendSec does not cut the stream', async () => {
    const stream = await openStream(gw.url, '/api/streams/slow-events');
    await within(stream.ended, 3_000, 'end of stream');
    assert.equal(stream.status, 200);
    assert.deepEqual(
      stream.events.map((e) => e.data),
      ['before', 'after'],
    );
  });

  it('keeps the headers timeout: no response head within timeouts.backendSec gives 504 JSON', async () => {
    const stream = await openStream(gw.url, '/api/streams/no-head');
    assert.equal(stream.status, 504);
    assert.equal(stream.headers['x-portico-error'], 'GW_UPSTREAM_TIMEOUT');
  });

  it('relays a backend error answer as it is', async () => {
    const res = await openStream(gw.url, '/api/streams/not-found');
    await within(res.ended, 2_000, 'end');
    assert.equal(res.status, 404);
    assert.equal(res.headers['content-type'], 'application/json');
  });

  it('answers 502 JSON when the backend is unreachable', async () => {
    const res = await openStream(gw.url, '/api/down');
    assert.equal(res.status, 502);
    assert.equal(res.headers['x-portico-error'], 'GW_UPSTREAM_UNREACHABLE');
  });

  it('runs streams on the unlimited stream pool, never on the 64-connection pool', async () => {
    const origin = gw.gateway.config().routes[0]!.origin;
    const upstream = gw.gateway.upstreams.forOrigin(origin);
    const before = upstream.pick().dispatcher.stats.connected;
    const streams = await Promise.all([1, 2, 3].map(() => openStream(gw.url, '/api/streams/forever')));
    await Promise.all(streams.map((s) => s.waitFor(1)));
    assert.equal(upstream.pickForStream().dispatcher.stats.running, 3);
    assert.equal(upstream.pick().dispatcher.stats.connected, before);
    for (const s of streams) s.req.destroy();
  });
});
