import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ForwardCall } from './forward.js';
import { DeadlineSweep } from '../upstream/call/deadlines.js';
import { fakeCall, fakeExchange, rawHeaders } from '../../test/support/fake-backend-call.js';

/**
 * A call on a clock the test moves, not started: the test then plays undici (onConnect,
 * onHeaders, onData...); `at(ms)` moves the clock and runs the deadline sweep.
 */
function timed(overrides: Parameters<typeof fakeCall>[0] = {}, method = 'GET') {
  let clock = 0;
  const deadlines = new DeadlineSweep(() => clock);
  const { ex, res, req } = fakeExchange(method);
  const call = fakeCall({ deadlines, ...overrides });
  let resolved = 0;
  const handler = new ForwardCall(ex, call, () => resolved++);
  const aborts: Error[] = [];
  return {
    ex,
    res,
    req,
    call,
    handler,
    deadlines,
    aborts,
    resolved: () => resolved,
    connect: () => handler.onConnect((err) => void aborts.push(err ?? new Error('abort'))),
    at(ms: number) {
      clock = ms;
      deadlines.check();
    },
  };
}

/** A started call. */
function started(method = 'GET') {
  const t = timed({}, method);
  t.handler.start();
  return t;
}

const names = (reported: { name: string }[]) => reported.map((r) => r.name);

describe('ForwardCall', () => {
  it('dispatches the backend path and the forwarding headers, counted on its pool until it ends', () => {
    const t = started();
    assert.equal(t.call.dispatched.length, 1);
    const { path, method, headers } = t.call.dispatched[0]!.options;
    assert.equal(path, '/items');
    assert.equal(method, 'GET');
    assert.deepEqual(headers.slice(0, 2), ['host', 'backend:8080']);
    assert.equal(headers[headers.indexOf('x-forwarded-for') + 1], '10.0.0.7');
    assert.equal(headers[headers.indexOf('x-request-id') + 1], 'rid-1');
    assert.equal(t.call.pool.inFlight, 1);
    assert.equal(t.ex.onClose, t.handler.onClientClose);
    t.connect();
    t.handler.onHeaders(200, rawHeaders({ 'content-length': '2' }), () => undefined);
    t.handler.onData(Buffer.from('ok'));
    t.handler.onComplete();
    assert.equal(t.call.pool.inFlight, 0);
  });

  it("writes the backend's head (hop-by-hop headers dropped, the request id set) and body, then ends and resolves", () => {
    const t = started();
    t.connect();
    assert.equal(
      t.handler.onHeaders(103, rawHeaders({ link: '</a>' }), () => undefined),
      true,
    );
    assert.equal(t.res.head, undefined, '1xx answers are not forwarded');
    const headers = rawHeaders({
      'content-type': 'text/plain',
      connection: 'keep-alive',
      'x-request-id': 'backend-id',
      'set-cookie': ['a=1', 'b=2'],
    });
    assert.equal(
      t.handler.onHeaders(200, headers, () => undefined),
      true,
    );
    assert.deepEqual(t.res.head, {
      status: 200,
      headers: { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'], 'x-request-id': 'rid-1' },
    });
    assert.equal(t.ex.upstreamStatus, 200);
    t.handler.onData(Buffer.from('hello '));
    t.handler.onData(Buffer.from('world'));
    assert.equal(t.resolved(), 0);
    t.handler.onComplete();
    assert.equal(t.res.body, 'hello world');
    assert.equal(t.res.writableEnded, true);
    assert.equal(t.resolved(), 1);
    assert.deepEqual(names(t.call.reported), ['upstream:response']);
    assert.deepEqual(
      { ...(t.call.reported[0]!.event as object), durationMs: 0 },
      { routeId: 'r1', origin: 'http://backend:8080', call: 'backend', status: 200, durationMs: 0 },
    );
  });

  it('pauses the backend while the client does not read, and resumes on drain', () => {
    const t = started();
    t.connect();
    let resumed = 0;
    t.handler.onHeaders(200, [], () => resumed++);
    t.res.accepts = false;
    assert.equal(t.handler.onData(Buffer.from('a')), false);
    t.res.emit('drain');
    assert.equal(resumed, 1);
  });

  it('answers a 204 without Content-Length and settles at once', () => {
    const t = started();
    t.connect();
    t.handler.onHeaders(204, rawHeaders({ 'content-length': '0' }), () => undefined);
    assert.deepEqual(t.res.head?.headers, { 'x-request-id': 'rid-1' });
    assert.equal(t.res.writableEnded, true);
    assert.equal(t.resolved(), 1);
    t.handler.onComplete();
    assert.equal(t.resolved(), 1);
    assert.equal(t.call.pool.inFlight, 0);
  });

  const failures = [
    { name: 'refused', code: 'ECONNREFUSED', status: 502, error: 'GW_UPSTREAM_UNREACHABLE', kind: 'refused' },
    { name: 'reset', code: 'ECONNRESET', status: 502, error: 'GW_UPSTREAM_UNREACHABLE', kind: 'reset' },
    {
      name: 'no head in time',
      code: 'UND_ERR_HEADERS_TIMEOUT',
      status: 504,
      error: 'GW_UPSTREAM_TIMEOUT',
      kind: 'timeout',
    },
  ];
  for (const f of failures) {
    it(`answers ${f.status} JSON when the call fails before the head (${f.name})`, () => {
      const t = started();
      t.connect();
      t.handler.onError(Object.assign(new Error(f.name), { code: f.code }));
      assert.equal(t.res.head?.status, f.status);
      assert.equal(t.res.head?.headers['x-portico-error'], f.error);
      assert.equal(JSON.parse(t.res.body).success, false);
      assert.equal(t.ex.upstreamFailure, f.kind);
      assert.equal(t.ex.errorCode, f.error);
      assert.deepEqual(names(t.call.reported), ['upstream:error']);
      assert.equal(t.resolved(), 1);
      assert.equal(t.call.pool.inFlight, 0);
    });
  }

  it('cuts a response whose head went out when the backend fails mid-body', () => {
    const t = started();
    t.connect();
    t.handler.onHeaders(200, [], () => undefined);
    t.handler.onData(Buffer.from('part'));
    t.handler.onError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    assert.equal(t.res.destroyed, true);
    assert.equal(t.res.head?.status, 200);
    assert.equal(t.ex.upstreamFailure, undefined, 'the backend answered: the circuit counts its status');
    assert.deepEqual(names(t.call.reported), ['upstream:response', 'upstream:error']);
  });

  it('refuses a transfer coding other than chunked: the call is aborted and answered 502', () => {
    const t = started();
    t.connect();
    assert.equal(
      t.handler.onHeaders(200, rawHeaders({ 'transfer-encoding': 'gzip, chunked' }), () => undefined),
      false,
    );
    assert.equal(t.aborts.length, 1);
    t.handler.onError(t.aborts[0]!);
    assert.equal(t.res.head?.status, 502);
    assert.equal(t.ex.upstreamStatus, undefined);
  });

  it('a client that leaves before the call has a connection: given up at dispatch, reported as its departure', () => {
    const t = started();
    t.res.destroyed = true;
    t.ex.onClose?.();
    t.connect();
    assert.equal(t.aborts.length, 1);
    assert.equal((t.aborts[0] as Error & { code?: string }).code, 'UND_ERR_ABORTED');
    t.handler.onError(t.aborts[0]!);
    assert.equal(t.res.head, undefined, 'nobody to answer');
    assert.equal(t.ex.upstreamFailure, 'aborted', 'the circuit counts nothing');
    assert.deepEqual(names(t.call.reported), ['client:closed']);
    assert.equal(t.call.pool.inFlight, 0);
  });

  it('a client that leaves mid-body aborts the call at once', () => {
    const t = started();
    t.connect();
    t.handler.onHeaders(200, [], () => undefined);
    t.ex.onClose?.();
    assert.equal(t.aborts.length, 1);
    t.handler.onError(t.aborts[0]!);
    assert.equal(t.res.destroyed, true);
    assert.deepEqual(names(t.call.reported), ['upstream:response', 'client:closed']);
  });

  it('a response that finished does not abort anything when it closes', () => {
    const t = started();
    t.connect();
    t.handler.onHeaders(200, [], () => undefined);
    t.handler.onComplete();
    t.ex.onClose?.();
    assert.equal(t.aborts.length, 0);
  });

  it('a call queued behind a full pool is answered 504 at backendSec and dropped at dispatch', () => {
    const t = timed();
    t.call.pool.inFlight = 1; // the pool's one connection is busy
    t.handler.start();
    t.at(999);
    assert.equal(t.res.headersSent, false);
    t.at(1_000);
    assert.equal(t.res.head?.status, 504);
    assert.equal(t.ex.upstreamFailure, 'timeout');
    assert.equal(t.resolved(), 1);
    assert.deepEqual(names(t.call.reported), ['upstream:error']);
    t.connect();
    assert.equal(t.aborts.length, 1, 'the queued call never reaches the backend');
    t.handler.onError(t.aborts[0]!);
    assert.equal(t.call.pool.inFlight, 1, 'only the busy call is left');
    assert.equal(t.resolved(), 1);
    assert.equal(t.deadlines.size, 0, 'a finished call is no longer watched');
  });

  it('undici times nothing: the call dispatches with its timers off and keeps the deadlines itself', () => {
    const t = timed();
    t.handler.start();
    const { headersTimeout, bodyTimeout } = t.call.dispatched[0]!.options as {
      headersTimeout?: number;
      bodyTimeout?: number;
    };
    assert.deepEqual({ headersTimeout, bodyTimeout }, { headersTimeout: 0, bodyTimeout: 0 });
    assert.equal(t.deadlines.size, 1);
  });

  it('a connected call without a head at backendSec is aborted as a headers timeout (504)', () => {
    const t = timed();
    t.handler.start();
    t.connect();
    t.at(999);
    assert.equal(t.aborts.length, 0);
    t.at(1_000);
    assert.equal(t.aborts.length, 1);
    assert.equal((t.aborts[0] as Error & { code?: string }).code, 'UND_ERR_HEADERS_TIMEOUT');
    t.handler.onError(t.aborts[0]!);
    assert.equal(t.res.head?.status, 504);
    assert.equal(t.res.head?.headers['x-portico-error'], 'GW_UPSTREAM_TIMEOUT');
    assert.equal(t.deadlines.size, 0);
  });

  it('a body silent for backendIdleSec is aborted as a body timeout; each chunk moves the deadline', () => {
    const t = timed({ bodyTimeoutMs: 500 });
    t.handler.start();
    t.connect();
    t.at(100);
    t.handler.onHeaders(200, rawHeaders({ 'content-length': '4' }), () => undefined);
    t.at(599);
    t.handler.onData(Buffer.from('ab'));
    t.at(1_098);
    assert.equal(t.aborts.length, 0, '499 ms after the last chunk');
    t.at(1_099);
    assert.equal(t.aborts.length, 1);
    assert.equal((t.aborts[0] as Error & { code?: string }).code, 'UND_ERR_BODY_TIMEOUT');
  });

  it('the body deadline waits while the client is the one not taking the answer', () => {
    const t = timed({ bodyTimeoutMs: 500 });
    t.handler.start();
    t.connect();
    t.handler.onHeaders(200, rawHeaders({ 'content-length': '4' }), () => undefined);
    t.res.accepts = false;
    assert.equal(t.handler.onData(Buffer.from('ab')), false);
    t.at(5_000);
    assert.equal(t.aborts.length, 0, "a slow client is config.writeTimeoutSec's business");
    t.res.accepts = true;
    t.res.emit('drain');
    t.at(5_499);
    assert.equal(t.aborts.length, 0);
    t.at(5_500);
    assert.equal(t.aborts.length, 1, 'silent for 500 ms since the client drained');
  });

  it('a call with no backendSec has no head deadline', () => {
    const t = timed({ headersTimeoutMs: 0 });
    t.handler.start();
    assert.equal(t.deadlines.size, 0);
  });
});
