import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sseDropSet, sseResponseHeaders } from './sse.js';

describe('sseResponseHeaders', () => {
  it('keeps end-to-end headers, drops hop-by-hop ones and the backend request id, adds X-Accel-Buffering: no', () => {
    const out = sseResponseHeaders({
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive, x-hop',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      'x-hop': 'dropped',
      'x-request-id': 'backend-id',
      'set-cookie': ['a=1', 'b=2'],
    });
    assert.deepEqual(out, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'set-cookie': ['a=1', 'b=2'],
      'x-accel-buffering': 'no',
    });
  });

  it('overrides a backend X-Accel-Buffering: yes (the gateway never buffers a stream)', () => {
    assert.equal(sseResponseHeaders({ 'x-accel-buffering': 'yes' })['x-accel-buffering'], 'no');
  });
});

describe('sseDropSet', () => {
  it('adds accept-encoding to the configured drop set without changing it', () => {
    const base = new Set(['connection', 'x-userid']);
    const drop = sseDropSet(base);
    assert.deepEqual([...drop].sort(), ['accept-encoding', 'connection', 'x-userid']);
    assert.equal(base.has('accept-encoding'), false);
  });
});
