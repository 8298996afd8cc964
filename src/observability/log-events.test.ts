import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createEventBus } from './events.js';
import { logEvents } from './log-events.js';
import { captureLogger } from '../../test/support/capture-logger.js';

function setup() {
  const { logger, lines } = captureLogger();
  const bus = createEventBus();
  logEvents(bus, logger, { repeatWindowMs: 1_000 });
  return { bus, lines };
}

const fail = (requestId: string, reason = 'circuit open') => ({
  requestId,
  routeId: 'GET /posts',
  tag: 'author',
  url: `http://users:1/users/${requestId}`,
  reason,
  items: 50,
  calls: 50,
});

describe('logEvents: warnings of an outage are aggregated and rate-limited', () => {
  it('writes one mapping line per key and window, then one line with the count held back', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { bus, lines } = setup();
    for (let i = 0; i < 100; i++) bus.emit('mapping:fail', fail(`r${i}`));
    bus.emit('mapping:fail', fail('other', 'status 500'));
    const mapping = () => lines.filter((l) => l.msg === 'mapping failed');
    assert.deepEqual(
      mapping().map((l) => [l.reqId, l.reason, l.items, l.repeated]),
      [
        ['r0', 'circuit open', 50, undefined],
        ['other', 'status 500', 50, undefined],
      ],
    );
    t.mock.timers.tick(1_000);
    const summary = mapping().at(-1)!;
    assert.equal(summary.repeated, 99);
    assert.equal(summary.repeatedItems, 99 * 50);
    assert.equal(summary.reason, 'circuit open');
    assert.equal(mapping().length, 3);
  });

  it('rate-limits identical upstream errors by route, origin and kind', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { bus, lines } = setup();
    for (let i = 0; i < 20; i++)
      bus.emit('upstream:error', {
        requestId: `r${i}`,
        routeId: 'GET /a',
        origin: 'http://a:1',
        kind: 'refused',
        error: new Error('ECONNREFUSED'),
      });
    bus.emit('upstream:error', {
      requestId: 'x',
      routeId: 'GET /a',
      origin: 'http://a:1',
      kind: 'timeout',
      error: new Error('slow'),
    });
    t.mock.timers.tick(1_000);
    assert.deepEqual(
      lines.filter((l) => l.msg === 'upstream error').map((l) => [l.kind, l.repeated]),
      [
        ['refused', undefined],
        ['timeout', undefined],
        ['refused', 19],
      ],
    );
  });

  it('logs a client departure at debug as "client closed", never as an upstream error', () => {
    const { bus, lines } = setup();
    bus.emit('client:closed', { requestId: 'r', routeId: 'GET /events', origin: 'http://b:1' });
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg, l.reqId]),
      [[20, 'client closed', 'r']],
    );
  });
});
