/**
 * Span export against a collector that accepts connections and never answers: memory stays
 * bounded (at most one send in flight, the queue capped, the excess dropped and counted) and
 * close() gives up after its deadline instead of waiting for every batch.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createEventBus } from '../../src/observability/events.js';
import { createLogger } from '../../src/observability/logger.js';
import { startOtlpExporter } from '../../src/observability/otlp.js';
import { waitFor } from '../support/wait-for.js';
import { createTracer } from '../../src/observability/trace-context.js';

describe('OTLP export to a collector that never answers', () => {
  let collector: Server;
  let requestsStarted = 0;
  const sockets = new Set<Socket>();
  before(async () => {
    // Reads everything, answers nothing: every export hangs until the exporter gives up.
    collector = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('data', (d: Buffer) => {
        requestsStarted += d.toString('latin1').split('POST /v1/traces ').length - 1;
      });
    });
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => collector.close(r));
  });

  it('keeps at most 4096 spans and one send, drops and counts the rest, and closes within its deadline', async () => {
    const events = createEventBus();
    const exporter = startOtlpExporter({
      endpoint: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
      serviceName: 'portico-test',
      events,
      logger: createLogger({ level: 'silent' }),
      tracer: createTracer(),
      flushIntervalMs: 20,
    });
    const total = 200_000;
    for (let i = 0; i < total; i++) {
      const id = i.toString(16).padStart(16, '0');
      events.emit('request:end', {
        requestId: `r${i}`,
        method: 'GET',
        routeId: 'GET /a',
        path: '/api/a',
        status: 200,
        durationMs: 1,
        aborted: false,
        trace: {
          traceId: id.repeat(2),
          parentId: undefined,
          spanId: id,
          sampled: true,
          tracestate: undefined,
          children: undefined,
        },
      });
      // Let the flush timer and the socket run now and then, as a busy gateway would.
      if (i % 20_000 === 0) await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal(exporter.queued, 4096);
    assert.equal(exporter.dropped, total - 4096);
    // Bounded wait for the one send to reach the collector.
    await waitFor(() => requestsStarted > 0, 5_000, 'a send reaching the collector');
    assert.equal(requestsStarted, 1, 'one send in flight, the rest wait in the queue');

    const started = performance.now();
    await exporter.close();
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 1_900 && elapsed < 3_500, `close took ${Math.round(elapsed)} ms`);
    assert.equal(exporter.queued, 0);
    assert.equal(exporter.dropped, total, 'what was left at the deadline is dropped and counted');
  });
});
