import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { accessLogWriter, hundredths } from './access-log.js';
import type { GatewayEvents } from './events.js';

type RequestEnd = GatewayEvents['request:end'];

/** A logger whose lines land in `lines` (pino writes strings to a plain `write`). */
function capture(level = 'info') {
  const lines: string[] = [];
  const logger = pino({ level, base: { service: 'portico' } }, { write: (s: string) => void lines.push(s) }).child({
    role: 'worker',
  });
  return { logger, lines };
}

/** What pino itself writes for the same request (the format the access log must keep). */
function pinoLine(e: RequestEnd): Record<string, unknown> {
  const { logger, lines } = capture();
  logger[e.status >= 500 ? 'warn' : 'info'](
    {
      reqId: e.requestId,
      method: e.method,
      route: e.routeId,
      path: e.path,
      status: e.status,
      durationMs: e.durationMs,
      aborted: e.aborted || undefined,
      error: e.errorCode,
    },
    'request',
  );
  return withoutTime(lines[0]!);
}

function withoutTime(line: string): Record<string, unknown> {
  const { time, ...rest } = JSON.parse(line) as Record<string, unknown>;
  assert.equal(typeof time, 'number');
  return rest;
}

const base: RequestEnd = {
  requestId: 'b6f1c8a2-1234-4cde-9f00-0123456789ab',
  method: 'GET',
  routeId: 'GET /users/:id',
  path: '/api/users/7',
  status: 200,
  durationMs: 1.23,
  aborted: false,
};

describe('access log line', () => {
  const cases: [string, RequestEnd][] = [
    ['a plain request', base],
    ['no route matched, gateway error', { ...base, routeId: undefined, status: 404, errorCode: 'GW_ROUTE_NOT_FOUND' }],
    [
      'a 5xx (warn level) from an aborted client',
      { ...base, status: 502, aborted: true, errorCode: 'GW_UPSTREAM_UNREACHABLE' },
    ],
    [
      'quotes, backslashes, control characters and unicode',
      { ...base, requestId: 'a"b\\c', path: '/api/"x"\\\u0001/\u00e9\u{1F600}/\ud800' },
    ],
    ['an integer duration', { ...base, durationMs: 3 }],
  ];
  for (const [name, e] of cases) {
    it(`is what pino writes for ${name}`, () => {
      const { logger, lines } = capture();
      accessLogWriter(logger)(e);
      assert.equal(lines.length, 1);
      assert.ok(lines[0]!.endsWith('}\n'));
      assert.deepEqual(withoutTime(lines[0]!), pinoLine(e));
    });
  }

  it('follows the logger level, also when it changes later', () => {
    const { logger, lines } = capture('warn');
    const write = accessLogWriter(logger);
    write(base);
    write({ ...base, status: 503 });
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { status: number }).status),
      [503],
    );
    logger.level = 'info';
    write(base);
    assert.equal(lines.length, 2);
  });

  it('keeps each line at its own level within one millisecond', () => {
    const { logger, lines } = capture();
    const write = accessLogWriter(logger);
    write(base);
    write({ ...base, status: 502 });
    write(base);
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { level: number }).level),
      [30, 40, 30],
    );
  });
});

describe('hundredths', () => {
  it('writes every duration in hundredths of a millisecond as JavaScript writes the number', () => {
    for (let h = 0; h <= 200_000; h++) {
      const ms = h / 100;
      if (hundredths(ms) !== String(ms)) assert.fail(`${ms}: ${hundredths(ms)}`);
    }
    assert.equal(hundredths(3_600_000.07), '3600000.07');
  });

  it('rounds a finer duration to hundredths', () => {
    assert.equal(hundredths(1.234), '1.23');
    assert.equal(hundredths(0.996), '1');
    assert.equal(hundredths(2.0049), '2');
  });
});
