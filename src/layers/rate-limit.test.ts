import { once } from 'node:events';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createRateLimiter,
  rateLimitLayer,
  routeRateLimit,
  type RateLimitPolicy,
  type RateLimitStore,
} from './rate-limit.js';
import type { CompiledRoute, Exchange } from '../pipeline/types.js';
import { fakeUpgradeExchange, neverRuns, recordingNext } from '../../test/support/exchanges.js';
import type { RateLimitConfig } from '../config/schema.js';

const GLOBAL_ON: RateLimitConfig = {
  enabled: true,
  requestsPerSec: 10,
  burst: undefined,
  store: 'local',
  ipv6PrefixLength: 64,
  key: 'ip',
};
const GLOBAL_OFF: RateLimitConfig = {
  enabled: false,
  requestsPerSec: 10,
  burst: undefined,
  store: 'local',
  ipv6PrefixLength: 64,
  key: 'ip',
};

const IP = { kind: 'ip' } as const;

describe('route rate-limit policy', () => {
  const table: {
    name: string;
    own: Parameters<typeof routeRateLimit>[0]['rateLimit'];
    settings: RateLimitConfig;
    expect: RateLimitPolicy | undefined;
  }[] = [
    { name: 'off everywhere', own: undefined, settings: GLOBAL_OFF, expect: undefined },
    {
      name: 'shared bucket, burst 2 x rate',
      own: undefined,
      settings: GLOBAL_ON,
      expect: { scope: '', requestsPerSec: 10, burst: 20, key: IP },
    },
    {
      name: 'explicit shared burst',
      own: undefined,
      settings: { ...GLOBAL_ON, burst: 5 },
      expect: { scope: '', requestsPerSec: 10, burst: 5, key: IP },
    },
    { name: 'route exempt', own: { enabled: false }, settings: GLOBAL_ON, expect: undefined },
    {
      name: 'route own numbers',
      own: { enabled: true, requestsPerSec: 1 },
      settings: GLOBAL_OFF,
      expect: { scope: 'GET /a\n', requestsPerSec: 1, burst: 2, key: IP },
    },
    {
      name: 'route own burst only',
      own: { enabled: true, burst: 3 },
      settings: GLOBAL_ON,
      expect: { scope: 'GET /a\n', requestsPerSec: 10, burst: 3, key: IP },
    },
    {
      name: 'route opts in with shared numbers while shared is off',
      own: { enabled: true },
      settings: GLOBAL_OFF,
      expect: { scope: 'GET /a\n', requestsPerSec: 10, burst: 20, key: IP },
    },
    {
      name: 'route opts in while shared is on',
      own: { enabled: true },
      settings: GLOBAL_ON,
      expect: { scope: '', requestsPerSec: 10, burst: 20, key: IP },
    },
  ];
  for (const c of table) {
    it(c.name, () => assert.deepEqual(routeRateLimit({ id: 'GET /a', rateLimit: c.own }, c.settings), c.expect));
  }
});

describe('token bucket', () => {
  it('admits burst requests at once, then one per 1/rate seconds', () => {
    let now = 1_000;
    const limiter = createRateLimiter({ now: () => now });
    const policy = { scope: '', requestsPerSec: 2, burst: 3, key: IP };
    assert.deepEqual(
      [1, 2, 3].map(() => limiter.take('a', policy)),
      [2, 1, 0],
    );
    assert.equal(limiter.take('a', policy), -1);
    now += 250; // half a token
    assert.equal(limiter.take('a', policy), -0.5);
    now += 250;
    assert.equal(limiter.take('a', policy), 0);
    // another client has its own bucket
    assert.equal(limiter.take('b', policy), 2);
  });

  it('never holds more than burst tokens', () => {
    let now = 0;
    const limiter = createRateLimiter({ now: () => now });
    const policy = { scope: '', requestsPerSec: 100, burst: 2, key: IP };
    limiter.take('a', policy);
    now += 60_000;
    assert.equal(limiter.take('a', policy), 1);
  });

  it('keeps at most maxClients buckets', () => {
    const limiter = createRateLimiter({ maxClients: 3, now: () => 0 });
    const policy = { scope: '', requestsPerSec: 1, burst: 1, key: IP };
    for (const k of ['a', 'b', 'c', 'd', 'e']) limiter.take(k, policy);
    assert.equal(limiter.size, 3);
  });

  it('forgets a bucket once it would be full again (TTL = burst / rate)', () => {
    let now = 10;
    const limiter = createRateLimiter({ now: () => now });
    const policy = { scope: '', requestsPerSec: 1, burst: 2, key: IP };
    limiter.take('a', policy);
    assert.equal(limiter.size, 1);
    now += 2_001;
    limiter.take('b', policy); // lru-cache purges lazily; a stale entry is invisible to get()
    assert.equal(limiter.take('a', policy), 1);
  });

  it('applies new numbers to an existing bucket (reload)', () => {
    const now = 0;
    const limiter = createRateLimiter({ now: () => now });
    limiter.take('a', { requestsPerSec: 10, burst: 20 });
    assert.equal(limiter.take('a', { requestsPerSec: 1, burst: 5 }), 4);
  });
});

function fakeExchange(remoteAddress = '10.0.0.1'): {
  ex: Exchange;
  headers: Record<string, unknown>;
  sent: { status?: number; body?: string };
} {
  const headers: Record<string, unknown> = {};
  const sent: { status?: number; body?: string } = {};
  const res = {
    headersSent: false,
    setHeader: (n: string, v: unknown) => void (headers[n] = v),
    writeHead(status: number, h: Record<string, unknown>) {
      sent.status = status;
      Object.assign(headers, h);
      return this;
    },
    end: (b: Buffer) => void (sent.body = b.toString()),
  } as unknown as ServerResponse;
  const req = { socket: { remoteAddress }, headers: {} } as unknown as IncomingMessage;
  return { ex: { req, res, errorCode: undefined } as unknown as Exchange, headers, sent };
}

describe('rate limit layer', () => {
  const policy = { scope: '', requestsPerSec: 1, burst: 2, key: IP };

  it('passes with RateLimit headers while tokens remain', async () => {
    const limiter = createRateLimiter({ now: () => 0 });
    let calls = 0;
    const step = rateLimitLayer(policy, limiter, (ex) => ex.req.socket.remoteAddress!)(async () => void calls++);
    const { ex, headers } = fakeExchange();
    await step(ex);
    assert.equal(calls, 1);
    assert.deepEqual(headers, {
      'ratelimit-policy': '"burst";q=2;w=2',
      ratelimit: '"burst";r=1;t=1',
      'ratelimit-limit': '2',
      'ratelimit-remaining': 1,
      'ratelimit-reset': 1,
    });
  });

  it('answers 429 GW_RATE_LIMITED with Retry-After and never calls next', async () => {
    const limiter = createRateLimiter({ now: () => 0 });
    let calls = 0;
    const step = rateLimitLayer(policy, limiter, (ex) => ex.req.socket.remoteAddress!)(async () => void calls++);
    await step(fakeExchange().ex);
    await step(fakeExchange().ex);
    const { ex, headers, sent } = fakeExchange();
    await step(ex);
    assert.equal(calls, 2);
    assert.equal(sent.status, 429);
    assert.equal(ex.errorCode, 'GW_RATE_LIMITED');
    assert.deepEqual(JSON.parse(sent.body!), { error: 'Too many requests', success: false });
    assert.equal(headers['retry-after'], '1');
    assert.equal(headers['ratelimit-remaining'], '0');
    assert.equal(headers['ratelimit-limit'], '2');
    assert.equal(headers['ratelimit-reset'], '2');
    assert.equal(headers['ratelimit-policy'], '"burst";q=2;w=2');
    assert.equal(headers.ratelimit, '"burst";r=0;t=1', 't names the moment Retry-After names');
    assert.equal(headers['x-portico-error'], 'GW_RATE_LIMITED');
  });

  it('waits for a store that answers later (Redis), with the same headers and 429', async () => {
    const answers = [1, -0.5];
    const keys: string[] = [];
    const store: RateLimitStore = {
      take: (key) => {
        keys.push(key);
        return Promise.resolve(answers.shift()!);
      },
    };
    let calls = 0;
    const step = rateLimitLayer(policy, store, (ex) => ex.req.socket.remoteAddress!)(async () => void calls++);
    const allowed = fakeExchange();
    await step(allowed.ex);
    assert.equal(calls, 1);
    assert.deepEqual(allowed.headers, {
      'ratelimit-policy': '"burst";q=2;w=2',
      ratelimit: '"burst";r=1;t=1',
      'ratelimit-limit': '2',
      'ratelimit-remaining': 1,
      'ratelimit-reset': 1,
    });
    const refused = fakeExchange();
    await step(refused.ex);
    assert.equal(calls, 1);
    assert.equal(refused.sent.status, 429);
    assert.equal(refused.headers['retry-after'], '1');
    assert.deepEqual(keys, ['10.0.0.1', '10.0.0.1']);
  });
});

describe('rate limit layer on a WebSocket handshake', () => {
  const policy = { scope: '', requestsPerSec: 1, burst: 1, key: IP };
  const route = { id: 'GET /chat' } as CompiledRoute;

  it('lets an upgrade through while tokens remain, then answers 429 on the socket without next', async () => {
    const limiter = createRateLimiter({ now: () => 0 });
    const layer = rateLimitLayer(policy, limiter, (ex) => ex.req.socket.remoteAddress!);
    const first = recordingNext<Exchange>();
    const allowed = fakeUpgradeExchange(route);
    await layer(first.next)(allowed.ex);
    assert.deepEqual(first.seen, [allowed.ex]);
    assert.equal(allowed.socket.written.length, 0, 'the backend writes the answer, not this layer');

    const { ex, socket } = fakeUpgradeExchange(route);
    await layer(neverRuns())(ex);
    await once(socket, 'close');
    const text = socket.text();
    assert.ok(text.startsWith('HTTP/1.1 429 Too Many Requests\r\n'), text);
    assert.match(text, /\r\nretry-after: 1\r\n/);
    assert.match(text, /\r\nratelimit-limit: 1\r\n/);
    assert.match(text, /\r\nratelimit: "burst";r=0;t=1\r\n/);
    assert.equal(ex.res.statusCode, 429);
    assert.equal(ex.errorCode, 'GW_RATE_LIMITED');
  });
});
