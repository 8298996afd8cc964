import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SseCall } from './sse.js';
import { fakeCall, fakeExchange, rawHeaders } from '../../test/support/fake-backend-call.js';

describe('SseCall', () => {
  it('keeps end-to-end headers, drops hop-by-hop ones and the backend request id, adds X-Accel-Buffering: no', () => {
    const { ex, res } = fakeExchange();
    const call = new SseCall(ex, fakeCall(), () => undefined, undefined);
    call.onConnect(() => undefined);
    call.onHeaders(
      200,
      rawHeaders({
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive, x-hop',
        'keep-alive': 'timeout=5',
        'transfer-encoding': 'chunked',
        'x-hop': 'dropped',
        'x-request-id': 'backend-id',
        'set-cookie': ['a=1', 'b=2'],
      }),
      () => undefined,
    );
    assert.deepEqual(res.head, {
      status: 200,
      headers: {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'set-cookie': ['a=1', 'b=2'],
        'x-request-id': 'rid-1',
        'x-accel-buffering': 'no',
      },
    });
    assert.equal(res.flushed, true, 'the head goes out before the first event');
  });

  it('overrides a backend X-Accel-Buffering: yes (the gateway never buffers a stream)', () => {
    const { ex, res } = fakeExchange();
    const call = new SseCall(ex, fakeCall(), () => undefined, undefined);
    call.onConnect(() => undefined);
    call.onHeaders(200, rawHeaders({ 'x-accel-buffering': 'yes' }), () => undefined);
    assert.equal(res.head?.headers['x-accel-buffering'], 'no');
  });
});
