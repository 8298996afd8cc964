import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { accessLogWriter } from './access-log.js';
import { LineBatch } from './line-batch.js';
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

/**
 * The same logger writing into the gateway's line batch (the stdout path), where the access log
 * encodes its lines straight into the batch; `lines()` flushes and splits what was handed over.
 */
function captureBatched(batchBytes?: number) {
  const chunks: Buffer[] = [];
  const batch = new LineBatch({ write: (c: Buffer) => void chunks.push(c) }, { batchBytes });
  const logger = pino({ level: 'info', base: { service: 'portico' } }, batch).child({ role: 'worker' });
  const lines = () => {
    batch.flushSync();
    return Buffer.concat(chunks)
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => l + '\n');
  };
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

    it(`is the same line, byte for byte, encoded into the line batch, for ${name}`, () => {
      const asString = capture();
      const batched = captureBatched();
      accessLogWriter(asString.logger)(e);
      accessLogWriter(batched.logger)(e);
      const [line] = batched.lines();
      assert.deepEqual(withoutTime(line!), pinoLine(e));
      // The time may have moved on by a millisecond between the two writes.
      const timeless = (l: string) => l.replace(/"time":\d+/, '"time":0');
      assert.equal(timeless(line!), timeless(asString.lines[0]!));
    });
  }

  it('writes a line too long for a batch as a string, whole', () => {
    const { logger, lines } = captureBatched(1024);
    const e = { ...base, path: `/api/${'x'.repeat(2_000)}` };
    accessLogWriter(logger)(e);
    accessLogWriter(logger)(base);
    const written = lines();
    assert.equal(written.length, 2);
    assert.deepEqual(withoutTime(written[0]!), pinoLine(e));
    assert.deepEqual(withoutTime(written[1]!), pinoLine(base));
  });

  it('passes a full batch on before a line that would not fit, and loses no line', () => {
    const { logger, lines } = captureBatched(1024);
    const write = accessLogWriter(logger);
    for (let i = 0; i < 40; i++) write({ ...base, requestId: `id-${i}` });
    const written = lines();
    assert.deepEqual(
      written.map((l) => (JSON.parse(l) as { reqId: string }).reqId),
      Array.from({ length: 40 }, (_, i) => `id-${i}`),
    );
  });

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
