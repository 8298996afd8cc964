import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { circuitLayer } from './circuit.js';
import type { CompiledRoute, Exchange, Step } from '../pipeline/types.js';
import { fakeUpgradeExchange, neverRuns as neverRunsUpgrade, waitingNext } from '../../test/support/exchanges.js';
import type { CircuitBreaker, CircuitPermit, CircuitState } from '../circuit/types.js';
import type { UpstreamFailureKind } from '../upstream/upstream-error.js';

/** A breaker that records what the layer reported. */
function recordingBreaker(admit = true, retryAfter = 7) {
  const outcomes: string[] = [];
  const breaker: CircuitBreaker = {
    origin: 'http://b:80',
    state: 'closed' as CircuitState,
    acquire(): CircuitPermit | undefined {
      if (!admit) return undefined;
      return {
        succeed: () => outcomes.push('succeed'),
        fail: () => outcomes.push('fail'),
        release: () => outcomes.push('release'),
      };
    },
    retryAfterSec: () => retryAfter,
  };
  return { breaker, outcomes };
}

interface FakeResponse {
  status?: number;
  headers?: Record<string, string | number>;
  body?: Buffer;
  headersSent: boolean;
  writeHead(status: number, headers?: Record<string, string | number>): FakeResponse;
  end(body?: Buffer): void;
  destroy(): void;
}

function fakeExchange() {
  let resumed = 0;
  const res: FakeResponse = {
    headersSent: false,
    writeHead(status, headers) {
      this.status = status;
      this.headers = headers;
      this.headersSent = true;
      return this;
    },
    end(body) {
      this.body = body;
    },
    destroy() {},
  };
  const ex = {
    req: { resume: () => resumed++ },
    res,
    upstreamStatus: undefined as number | undefined,
    upstreamFailure: undefined as UpstreamFailureKind | undefined,
    errorCode: undefined as string | undefined,
  };
  return { ex: ex as unknown as Exchange, res, resumed: () => resumed };
}

const neverRuns: Step = async () => assert.fail('next must not run');

/** Outcomes an endpoint records, and what the permit must be told. */
const cases: { name: string; status?: number; failure?: UpstreamFailureKind; expect: string }[] = [
  { name: '200 succeeds', status: 200, expect: 'succeed' },
  { name: '404 succeeds', status: 404, expect: 'succeed' },
  { name: '499 succeeds', status: 499, expect: 'succeed' },
  { name: '500 fails', status: 500, expect: 'fail' },
  { name: '503 fails', status: 503, expect: 'fail' },
  { name: 'refused fails', failure: 'refused', expect: 'fail' },
  { name: 'reset fails', failure: 'reset', expect: 'fail' },
  { name: 'timeout fails', failure: 'timeout', expect: 'fail' },
  { name: 'other fails', failure: 'other', expect: 'fail' },
  { name: 'client aborted releases', failure: 'aborted', expect: 'release' },
  { name: 'no backend call releases', expect: 'release' },
];

describe('circuitLayer', () => {
  it('no permit: 503 GW_CIRCUIT_OPEN with Retry-After, next never runs', async () => {
    const { breaker, outcomes } = recordingBreaker(false, 7);
    const { ex, res, resumed } = fakeExchange();
    await circuitLayer(breaker)(neverRuns)(ex);
    assert.equal(res.status, 503);
    assert.deepEqual(res.headers, {
      'content-type': 'application/json',
      'content-length': 74,
      'x-portico-error': 'GW_CIRCUIT_OPEN',
      'retry-after': 7,
    });
    assert.deepEqual(JSON.parse(res.body!.toString()), {
      error: 'Service temporarily unavailable (circuit open)',
      success: false,
    });
    assert.equal(ex.errorCode, 'GW_CIRCUIT_OPEN');
    assert.equal(resumed(), 1, 'the request body is drained');
    assert.deepEqual(outcomes, []);
  });

  it('Retry-After is a whole number of seconds, at least 1', async () => {
    for (const [given, sent] of [
      [0, 1],
      [0.2, 1],
      [1.5, 2],
      [30, 30],
    ] as const) {
      const { ex, res } = fakeExchange();
      await circuitLayer(recordingBreaker(false, given).breaker)(neverRuns)(ex);
      assert.equal(res.headers?.['retry-after'], sent);
    }
  });

  for (const c of cases) {
    it(`outcome: ${c.name}`, async () => {
      const { breaker, outcomes } = recordingBreaker();
      const { ex } = fakeExchange();
      let calls = 0;
      await circuitLayer(breaker)(async (e) => {
        calls++;
        e.upstreamStatus = c.status;
        e.upstreamFailure = c.failure;
      })(ex);
      assert.equal(calls, 1);
      assert.deepEqual(outcomes, [c.expect]);
    });
  }

  it('a throwing next still settles the permit, and the error propagates', async () => {
    const { breaker, outcomes } = recordingBreaker();
    const { ex } = fakeExchange();
    await assert.rejects(
      circuitLayer(breaker)(async () => {
        throw new Error('boom');
      })(ex),
      /boom/,
    );
    assert.deepEqual(outcomes, ['release']);
  });

  // When the permit is settled, by default and with settleOnResponseStart: checked while next
  // is still running, then once it has finished.
  const settleTimes = [
    {
      name: 'settles after next has finished, not before, and gives the exchange no response-start hook',
      options: undefined,
      endpoint(e: Exchange) {
        e.upstreamStatus = 200;
      },
      whileRunning(started: Exchange, outcomes: string[]) {
        assert.equal(started.onResponseStart, undefined);
        assert.deepEqual(outcomes, []);
      },
    },
    {
      name: 'settleOnResponseStart: settles when the endpoint starts the response, once',
      options: { settleOnResponseStart: true },
      endpoint(e: Exchange) {
        e.upstreamStatus = 200;
        e.onResponseStart?.();
        e.onResponseStart?.();
      },
      whileRunning(_started: Exchange, outcomes: string[]) {
        assert.deepEqual(outcomes, ['succeed'], 'the stream is still open');
      },
    },
  ];
  it('settleOnResponseStart keeps the hook an outer layer set: the response start runs both', async () => {
    const { breaker, outcomes } = recordingBreaker();
    const { ex } = fakeExchange();
    ex.onResponseStart = () => outcomes.push('outer');
    const waiting = waitingNext<Exchange>((e) => {
      e.upstreamStatus = 200;
      e.onResponseStart?.();
    });
    const running = circuitLayer(breaker, { settleOnResponseStart: true })(waiting.next)(ex);
    await waiting.started;
    assert.deepEqual(outcomes, ['outer', 'succeed']);
    waiting.finish();
    await running;
    assert.deepEqual(outcomes, ['outer', 'succeed']);
  });
  for (const c of settleTimes) {
    it(c.name, async () => {
      const { breaker, outcomes } = recordingBreaker();
      const { ex } = fakeExchange();
      const waiting = waitingNext<Exchange>(c.endpoint);
      const running = circuitLayer(breaker, c.options)(waiting.next)(ex);
      c.whileRunning(await waiting.started, outcomes);
      waiting.finish();
      await running;
      assert.deepEqual(outcomes, ['succeed']);
    });
  }

  it('settleOnResponseStart: an endpoint that never starts a response is settled at the end', async () => {
    const { breaker, outcomes } = recordingBreaker();
    const { ex } = fakeExchange();
    await circuitLayer(breaker, { settleOnResponseStart: true })(async (e) => {
      e.upstreamFailure = 'timeout';
      assert.deepEqual(outcomes, []);
    })(ex);
    assert.deepEqual(outcomes, ['fail']);
  });
});

describe('circuitLayer on a WebSocket handshake', () => {
  const route = { id: 'GET /chat' } as CompiledRoute;

  it('no permit: 503 GW_CIRCUIT_OPEN with Retry-After on the socket, next never runs', async () => {
    const { breaker, outcomes } = recordingBreaker(false, 12.2);
    const { ex, socket } = fakeUpgradeExchange(route);
    await circuitLayer(breaker)(neverRunsUpgrade())(ex);
    await once(socket, 'close');
    const text = socket.text();
    assert.ok(text.startsWith('HTTP/1.1 503 Service Unavailable\r\n'), text);
    assert.match(text, /\r\nretry-after: 13\r\n/);
    assert.match(text, /\r\nx-portico-error: GW_CIRCUIT_OPEN\r\n/);
    assert.equal(ex.res.statusCode, 503);
    assert.equal(ex.errorCode, 'GW_CIRCUIT_OPEN');
    assert.deepEqual(outcomes, []);
  });

  it('settles once the handshake is answered, by the outcome the endpoint recorded', async () => {
    for (const c of cases) {
      const { breaker, outcomes } = recordingBreaker();
      const { ex } = fakeUpgradeExchange(route);
      const waiting = waitingNext<Exchange>((u) => {
        u.upstreamStatus = c.status;
        u.upstreamFailure = c.failure;
      });
      const running = circuitLayer(breaker)(waiting.next)(ex);
      await waiting.started;
      assert.deepEqual(outcomes, [], c.name);
      waiting.finish();
      await running;
      assert.deepEqual(outcomes, [c.expect], c.name);
    }
  });
});
