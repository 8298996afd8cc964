/** The pure halves of delegated mode: what the call carries, and how the answer is read. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { authServiceRequestHeaders, interpretAuthAnswer } from './auth-service.js';
import { captureLogger } from '../../test/support/capture-logger.js';

describe('authServiceRequestHeaders', () => {
  it('carries the exact Authorization, the cookie, the request id and what the client asked for', () => {
    assert.deepEqual(
      authServiceRequestHeaders(
        { authorization: 'Bearer  a.b.c ', cookie: 'sid=1', 'x-role': 'admin', accept: '*/*' },
        'POST',
        '/api/orders?x=1',
        'rid-1',
        'auth:9105',
      ),
      [
        'host',
        'auth:9105',
        'x-request-id',
        'rid-1',
        'x-forwarded-method',
        'POST',
        'x-forwarded-uri',
        '/api/orders?x=1',
        'authorization',
        'Bearer  a.b.c ',
        'cookie',
        'sid=1',
      ],
    );
  });

  it('without Authorization the call is still made, without that header', () => {
    assert.deepEqual(authServiceRequestHeaders({}, 'GET', '/api/x', 'rid-2', 'auth:9105'), [
      'host',
      'auth:9105',
      'x-request-id',
      'rid-2',
      'x-forwarded-method',
      'GET',
      'x-forwarded-uri',
      '/api/x',
    ]);
  });
});

describe('interpretAuthAnswer', () => {
  const ok = [
    {
      name: '200 claims object',
      body: '{"userId":"7","username":"ada","role":"admin","exp":1}',
      claims: { userId: '7', username: 'ada', role: 'admin', exp: 1 },
      headers: [
        ['X-userId', '7'],
        ['X-username', 'ada'],
        ['X-role', 'admin'],
      ],
    },
    { name: '200 empty body', body: '', headers: [] },
    { name: '200 whitespace body', body: ' \n', headers: [] },
    { name: '200 {}', body: '{}', claims: {}, headers: [] },
  ];
  for (const c of ok) {
    it(`${c.name}: lets the request through`, () => {
      assert.deepEqual(
        interpretAuthAnswer(
          200,
          { 'content-type': 'application/json' },
          Buffer.from(c.body),
          'r',
          captureLogger().logger,
        ),
        { ok: true, claimHeaders: c.headers, ...(c.claims === undefined ? {} : { claims: c.claims }) },
      );
    });
  }

  for (const body of ['[1,2]', 'null', '"yes"', 'OK', '{"a":']) {
    it(`200 with ${JSON.stringify(body)}: fail closed with 503 GW_AUTH_UNAVAILABLE, logged`, () => {
      const { logger, lines } = captureLogger();
      const outcome = interpretAuthAnswer(200, {}, Buffer.from(body), 'r9', logger);
      assert.equal(outcome.ok, false);
      if (outcome.ok) return;
      assert.equal(outcome.status, 503);
      assert.equal(outcome.code, 'GW_AUTH_UNAVAILABLE');
      assert.deepEqual(JSON.parse(outcome.body.toString()), {
        error: 'Authentication service unavailable',
        success: false,
      });
      assert.equal(lines.filter((l) => l.reqId === 'r9' && l.level === 50).length, 1);
    });
  }

  it('a non-200 is relayed: status, body, content type and end-to-end headers; no hop-by-hop, no request id', () => {
    const body = Buffer.from('{"error":"expired","success":false}');
    const outcome = interpretAuthAnswer(
      401,
      {
        'content-type': 'application/json; charset=utf-8',
        'www-authenticate': 'Bearer error="invalid_token"',
        connection: 'keep-alive',
        'keep-alive': 'timeout=5',
        'transfer-encoding': 'chunked',
        'content-length': '999',
        'x-request-id': 'theirs',
        vary: ['a', 'b'],
      } as unknown as IncomingHttpHeaders,
      body,
      'r',
      captureLogger().logger,
    );
    assert.deepEqual(outcome, {
      ok: false,
      status: 401,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'www-authenticate': 'Bearer error="invalid_token"',
        vary: 'a, b',
        'content-length': String(body.length),
      },
      body,
      detail: 'auth service answered 401',
    });
  });

  it('204 is not 200: relayed as it is', () => {
    const outcome = interpretAuthAnswer(204, {}, Buffer.alloc(0), 'r', captureLogger().logger);
    assert.equal(outcome.ok, false);
    if (!outcome.ok) assert.equal(outcome.status, 204);
  });

  it('several Set-Cookie on a refusal: the first is relayed, the loss logged', () => {
    const { logger, lines } = captureLogger();
    const outcome = interpretAuthAnswer(
      302,
      { location: '/login', 'set-cookie': ['a=1', 'b=2'] },
      Buffer.alloc(0),
      'r',
      logger,
    );
    assert.equal(outcome.ok, false);
    if (outcome.ok) return;
    assert.deepEqual(outcome.headers, { location: '/login', 'set-cookie': 'a=1', 'content-length': '0' });
    assert.equal(lines.filter((l) => l.dropped === 1).length, 1);
  });
});
