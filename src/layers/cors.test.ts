import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { once } from 'node:events';
import { corsOriginProblem } from '../config/syntax/cors-origin.js';
import { compileCors, originCheckLayer } from './cors.js';
import type { CompiledRoute, Exchange } from '../pipeline/types.js';
import { fakeRequest, fakeUpgradeExchange, neverRuns, recordingNext } from '../../test/support/exchanges.js';
import type { CorsConfig } from '../config/schema.js';

const BASE: CorsConfig = {
  origins: ['https://app.example.com', 'https://*.example.org'],
  methods: ['GET', 'POST', 'PATCH'],
  headers: '*',
  exposedHeaders: ['X-Request-ID'],
  credentials: false,
  maxAgeSec: 600,
};

function call(headers: Record<string, string>): {
  req: IncomingMessage;
  res: ServerResponse;
  out: Record<string, unknown>;
  status: () => number | undefined;
} {
  const out: Record<string, unknown> = {};
  let status: number | undefined;
  const res = {
    setHeader: (n: string, v: unknown) => void (out[n] = v),
    writeHead(s: number, h: Record<string, unknown>) {
      status = s;
      Object.assign(out, h);
      return this;
    },
    end() {},
  } as unknown as ServerResponse;
  return { req: { headers } as unknown as IncomingMessage, res, out, status: () => status };
}

describe('CORS origins', () => {
  it('accepts origins and subdomain wildcards, refuses paths', () => {
    assert.equal(corsOriginProblem('https://app.example.com'), undefined);
    assert.equal(corsOriginProblem('http://localhost:3000'), undefined);
    assert.equal(corsOriginProblem('https://*.example.com'), undefined);
    assert.notEqual(corsOriginProblem('https://app.example.com/'), undefined);
    assert.notEqual(corsOriginProblem('app.example.com'), undefined);
  });
});

describe('CORS policy', () => {
  it('is off without config.cors', () => assert.equal(compileCors(undefined), undefined));

  it('recognises a preflight by Origin and Access-Control-Request-Method', () => {
    const cors = compileCors(BASE)!;
    assert.equal(
      cors.isPreflight(call({ origin: 'https://app.example.com', 'access-control-request-method': 'PATCH' }).req),
      true,
    );
    assert.equal(cors.isPreflight(call({ origin: 'https://app.example.com' }).req), false);
    assert.equal(cors.isPreflight(call({ 'access-control-request-method': 'PATCH' }).req), false);
  });

  it('answers an allowed preflight with 204 and the allow headers, reflecting requested headers', () => {
    const c = call({
      origin: 'https://app.example.com',
      'access-control-request-method': 'PATCH',
      'access-control-request-headers': 'content-type, x-custom',
    });
    compileCors(BASE)!.preflight(c.req, c.res);
    assert.equal(c.status(), 204);
    assert.deepEqual(c.out, {
      vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      'access-control-allow-origin': 'https://app.example.com',
      'access-control-allow-methods': 'GET, POST, PATCH',
      'access-control-allow-headers': 'content-type, x-custom',
      'access-control-max-age': '600',
      'content-length': 0,
    });
  });

  it('answers a preflight from an unknown origin with 204 and no allow headers', () => {
    const c = call({ origin: 'https://evil.example.net', 'access-control-request-method': 'GET' });
    compileCors(BASE)!.preflight(c.req, c.res);
    assert.equal(c.status(), 204);
    assert.equal(c.out['access-control-allow-origin'], undefined);
    assert.equal(c.out['access-control-allow-methods'], undefined);
  });

  it('matches subdomain wildcards at any depth but not the bare domain', () => {
    const cors = compileCors(BASE)!;
    for (const [origin, ok] of [
      ['https://a.example.org', true],
      ['https://a.b.example.org', true],
      ['https://example.org', false],
      ['http://a.example.org', false],
      ['https://a.example.org.evil.com', false],
    ] as const) {
      const c = call({ origin });
      cors.decorate(c.req, c.res);
      assert.equal(c.out['access-control-allow-origin'], ok ? origin : undefined, origin);
    }
  });

  it('uses a configured header list and sends credentials with the exact origin', () => {
    const c = call({
      origin: 'https://app.example.com',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'x-other',
    });
    compileCors({ ...BASE, headers: ['Content-Type', 'Authorization'], credentials: true })!.preflight(c.req, c.res);
    assert.equal(c.out['access-control-allow-headers'], 'Content-Type, Authorization');
    assert.equal(c.out['access-control-allow-credentials'], 'true');
    assert.equal(c.out['access-control-allow-origin'], 'https://app.example.com');
  });

  it('decorates an actual request: origin, Vary, exposed headers', () => {
    const c = call({ origin: 'https://app.example.com' });
    compileCors(BASE)!.decorate(c.req, c.res);
    assert.deepEqual(c.out, {
      vary: 'Origin',
      'access-control-allow-origin': 'https://app.example.com',
      'access-control-expose-headers': 'X-Request-ID',
    });
  });

  it('answers * for any origin without credentials, and nothing without Origin', () => {
    const cors = compileCors({ ...BASE, origins: '*' })!;
    const c = call({ origin: 'https://anything.test' });
    cors.decorate(c.req, c.res);
    assert.equal(c.out['access-control-allow-origin'], '*');
    assert.equal(c.out.vary, undefined);
    const none = call({});
    cors.decorate(none.req, none.res);
    assert.deepEqual(none.out, {});
  });
});

describe('CORS for WebSocket handshakes', () => {
  const allows = (headers: Record<string, string>, config: CorsConfig = BASE) =>
    compileCors(config)!.allowsUpgrade(call(headers).req);

  it("admits no Origin, an allowed origin, a wildcard match, and the gateway's own origin", () => {
    assert.equal(allows({ host: 'gw.test' }), true);
    assert.equal(allows({ host: 'gw.test', origin: 'https://APP.example.com' }), true);
    assert.equal(allows({ host: 'gw.test', origin: 'https://a.b.example.org' }), true);
    assert.equal(allows({ host: 'gw.test:8080', origin: 'http://gw.test:8080' }), true);
    assert.equal(allows({ host: 'anything', origin: 'https://evil.test' }, { ...BASE, origins: '*' }), true);
  });

  it('refuses a foreign origin, another port of the gateway host, "null", and a foreign origin without Host', () => {
    assert.equal(allows({ host: 'gw.test', origin: 'https://evil.test' }), false);
    assert.equal(allows({ host: 'gw.test:8080', origin: 'http://gw.test:9090' }), false);
    assert.equal(allows({ host: 'gw.test', origin: 'null' }), false);
    assert.equal(allows({ origin: 'https://evil.test' }), false);
    assert.equal(allows({ host: 'gw.test', origin: 'https://example.org' }), false);
  });
});

describe('Origin check of WebSocket upgrades', () => {
  const route = { id: 'GET /chat' } as CompiledRoute;
  const layer = originCheckLayer(compileCors(BASE)!);

  it("lets an allowed origin, the gateway's own and a non-browser client through", async () => {
    const clients: Record<string, string>[] = [
      { host: 'gw', origin: 'https://app.example.com' },
      { host: 'gw.example:8080', origin: 'https://gw.example:8080' },
      { host: 'gw' },
    ];
    for (const headers of clients) {
      const { next, seen } = recordingNext<Exchange>();
      const { ex, socket } = fakeUpgradeExchange(route, fakeRequest(headers));
      await layer(next)(ex);
      assert.deepEqual(seen, [ex], JSON.stringify(headers));
      assert.equal(socket.written.length, 0);
    }
  });

  it('answers a foreign origin 403 GW_ORIGIN_NOT_ALLOWED on the socket without next', async () => {
    const { ex, socket } = fakeUpgradeExchange(route, fakeRequest({ host: 'gw', origin: 'https://evil.example' }));
    await layer(neverRuns())(ex);
    await once(socket, 'close');
    assert.ok(socket.text().startsWith('HTTP/1.1 403 Forbidden\r\n'), socket.text());
    assert.match(socket.text(), /\r\nx-portico-error: GW_ORIGIN_NOT_ALLOWED\r\n/);
    assert.equal(ex.res.statusCode, 403);
    assert.equal(ex.errorCode, 'GW_ORIGIN_NOT_ALLOWED');
  });
});
