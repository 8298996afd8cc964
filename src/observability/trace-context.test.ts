import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import {
  childTraceparent,
  createTracer,
  newSpanId,
  newTraceId,
  parseTraceparent,
  peekTrace,
  traceHeaders,
  traceOf,
  type ChildSpan,
} from './trace-context.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

function req(headers: Record<string, string | string[]> = {}): IncomingMessage {
  return { headers } as unknown as IncomingMessage;
}

function bound(tracer: ReturnType<typeof createTracer>, headers: Record<string, string> = {}): IncomingMessage {
  const r = req(headers);
  tracer.bind(r);
  return r;
}

const SHAPE = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

describe('traceparent parsing (W3C 3.2)', () => {
  const table = [
    { name: 'valid, sampled', value: `00-${TRACE}-${PARENT}-01`, ok: true, sampled: true },
    { name: 'valid, not sampled', value: `00-${TRACE}-${PARENT}-00`, ok: true, sampled: false },
    { name: 'other flag bits ignored', value: `00-${TRACE}-${PARENT}-03`, ok: true, sampled: true },
    { name: 'future version with extra field', value: `01-${TRACE}-${PARENT}-01-extra`, ok: true, sampled: true },
    { name: 'version 00 with extra field', value: `00-${TRACE}-${PARENT}-01-extra`, ok: false, sampled: false },
    { name: 'version ff', value: `ff-${TRACE}-${PARENT}-01`, ok: false, sampled: false },
    { name: 'all-zero trace id', value: `00-${'0'.repeat(32)}-${PARENT}-01`, ok: false, sampled: false },
    { name: 'all-zero parent id', value: `00-${TRACE}-${'0'.repeat(16)}-01`, ok: false, sampled: false },
    { name: 'uppercase hex', value: `00-${TRACE.toUpperCase()}-${PARENT}-01`, ok: false, sampled: false },
    { name: 'short', value: `00-${TRACE}-${PARENT}`, ok: false, sampled: false },
    {
      name: 'two headers joined',
      value: `00-${TRACE}-${PARENT}-01, 00-${TRACE}-${PARENT}-01`,
      ok: false,
      sampled: false,
    },
  ];
  for (const c of table) {
    it(c.name, () => {
      const p = parseTraceparent(c.value);
      assert.equal(p !== undefined, c.ok);
      if (p) assert.deepEqual(p, { traceId: TRACE, parentId: PARENT, sampled: c.sampled });
    });
  }
});

describe('trace context of a request', () => {
  it('continues the client trace with a new span id per call, keeping tracestate', () => {
    const r = req({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'vendor=abc' });
    const a = childTraceparent(r);
    const b = traceHeaders(r);
    const ma = SHAPE.exec(a)!;
    const mb = SHAPE.exec(b[1]!)!;
    assert.equal(ma[1], TRACE);
    assert.equal(mb[1], TRACE);
    assert.notEqual(ma[2], PARENT);
    assert.notEqual(ma[2], mb[2]);
    assert.equal(ma[3], '01');
    assert.deepEqual([b[0], b[2], b[3]], ['traceparent', 'tracestate', 'vendor=abc']);
  });

  it("keeps the client's not-sampled flag", () => {
    assert.match(childTraceparent(req({ traceparent: `00-${TRACE}-${PARENT}-00` })), /-00$/);
  });

  it('starts one trace per request when the client sent none, or an invalid one (and drops tracestate)', () => {
    const r = req({ traceparent: 'garbage', tracestate: 'vendor=abc' });
    const first = SHAPE.exec(childTraceparent(r))!;
    const second = SHAPE.exec(childTraceparent(r))!;
    assert.equal(first[1], second[1]);
    assert.notEqual(first[1], TRACE);
    assert.deepEqual(traceHeaders(r).length, 2);
    assert.notEqual(SHAPE.exec(childTraceparent(req()))![1], first[1]);
  });

  it('marks new traces sampled per sampleRatio', () => {
    const tracer = createTracer();
    tracer.configure({ sampleRatio: 0 });
    assert.match(childTraceparent(bound(tracer)), /-00$/);
    tracer.configure({ sampleRatio: 1 });
    assert.match(childTraceparent(bound(tracer)), /-01$/);
  });

  it('makes nothing until asked, and one context per request', () => {
    const r = req();
    assert.equal(peekTrace(r), undefined);
    assert.equal(traceOf(r), traceOf(r));
    assert.equal(peekTrace(r), traceOf(r));
  });

  it('records child spans only while a recorder is installed and the trace is sampled', () => {
    const started: ChildSpan[] = [];
    const tracer = createTracer();
    tracer.setRecorder({ childStarted: (s) => void started.push(s) });
    const sampled = bound(tracer, { traceparent: `00-${TRACE}-${PARENT}-01`, host: 'api.example.com' });
    const header = childTraceparent(sampled);
    const ctx = traceOf(sampled);
    assert.equal(ctx.spanId.length, 16);
    assert.equal(ctx.children?.length, 1);
    assert.equal(started.length, 1);
    assert.equal(header.slice(36, 52), started[0]!.spanId);
    assert.equal(ctx.host, 'api.example.com');
    childTraceparent(bound(tracer, { traceparent: `00-${TRACE}-${PARENT}-00` }));
    assert.equal(started.length, 1);
    tracer.setRecorder(undefined);
    childTraceparent(sampled);
    assert.equal(started.length, 1);
  });

  it('keeps two tracers apart: each request follows the tracer it is bound to', () => {
    const recording = createTracer();
    const quiet = createTracer({ sampleRatio: 0 });
    const started: ChildSpan[] = [];
    recording.setRecorder({ childStarted: (s) => void started.push(s) });
    const a = bound(recording);
    const b = bound(quiet);
    assert.match(childTraceparent(a), /-01$/);
    assert.match(childTraceparent(b), /-00$/);
    assert.equal(started.length, 1);
    assert.equal(recording.isRecording(), true);
    assert.equal(quiet.isRecording(), false);
    assert.equal(traceOf(b).children, undefined);
  });

  it('traces a request bound to no tracer as sampled and never records it', () => {
    const r = req();
    assert.match(childTraceparent(r), /-01$/);
    assert.equal(traceOf(r).spanId, '');
    assert.equal(traceOf(r).children, undefined);
  });

  it('generates well-formed, distinct ids', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 1000; i++) ids.add(newSpanId());
    assert.equal(ids.size, 1000);
    assert.match(newSpanId(), /^[0-9a-f]{16}$/);
    assert.match(newTraceId(), /^[0-9a-f]{32}$/);
  });
});
