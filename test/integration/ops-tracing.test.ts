/**
 * W3C trace context to backends (a child span id per call), and OTLP/HTTP JSON export
 * to a real local collector when `telemetry.otlpEndpoint` is set.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { getStatus } from '../support/http.js';
import { waitFor } from '../support/wait-for.js';
import { closeAll } from '../support/close-all.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const SHAPE = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

describe('trace context propagation', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  const yaml = (propagation: boolean) => `
routes:
  - { method: GET, route: /a, service: ${'HOST'}, path: /a }
config:
  telemetry:
    propagation: ${propagation}
`;
  before(async () => {
    backend = await startBackend();
    gw = await startGateway(yaml(true).replace('HOST', backend.host));
  });
  after(() => closeAll(gw, backend));

  it('continues the client trace with a new span id and passes tracestate on', async () => {
    assert.equal(
      await getStatus(`${gw.url}/api/a`, {
        headers: { traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'congo=t61rcWkgMzE' },
      }),
      200,
    );
    const seen = backend.seen.at(-1)!;
    const m = SHAPE.exec(String(seen.headers.traceparent))!;
    assert.equal(m[1], TRACE);
    assert.notEqual(m[2], PARENT);
    assert.equal(m[3], '01');
    assert.equal(seen.headers.tracestate, 'congo=t61rcWkgMzE');
    assert.equal(seen.rawHeaders.filter((h) => h.toLowerCase() === 'traceparent').length, 1);
  });

  it('gives every call its own span id in the same trace', async () => {
    const headers = { traceparent: `00-${TRACE}-${PARENT}-01` };
    await getStatus(`${gw.url}/api/a`, { headers: headers });
    await getStatus(`${gw.url}/api/a`, { headers: headers });
    const [a, b] = backend.seen.slice(-2).map((s) => SHAPE.exec(String(s.headers.traceparent))!);
    assert.equal(a![1], b![1]);
    assert.notEqual(a![2], b![2]);
  });

  it('starts a trace when the client sent none or an invalid one, and drops its tracestate', async () => {
    await getStatus(`${gw.url}/api/a`, { headers: { traceparent: 'not-a-trace', tracestate: 'x=y' } });
    const seen = backend.seen.at(-1)!;
    const m = SHAPE.exec(String(seen.headers.traceparent))!;
    assert.notEqual(m[1], TRACE);
    assert.equal(m[3], '01');
    assert.equal(seen.headers.tracestate, undefined);
    await getStatus(`${gw.url}/api/a`);
    assert.notEqual(SHAPE.exec(String(backend.seen.at(-1)!.headers.traceparent))![1], m[1]);
  });

  it('passes the client headers through untouched with propagation off', async () => {
    gw.reload(yaml(false).replace('HOST', backend.host));
    await getStatus(`${gw.url}/api/a`, { headers: { traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'a=b' } });
    assert.equal(backend.seen.at(-1)!.headers.traceparent, `00-${TRACE}-${PARENT}-01`);
    assert.equal(backend.seen.at(-1)!.headers.tracestate, 'a=b');
    await getStatus(`${gw.url}/api/a`);
    assert.equal(backend.seen.at(-1)!.headers.traceparent, undefined);
  });
});

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: { stringValue?: string; intValue?: string } }[];
  status: { code: number };
}

describe('OTLP span export', () => {
  let backend: TestBackend;
  let collector: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((req, res) => json(res, req.url === '/boom' ? 500 : 200, {}));
    collector = await startBackend((_req, res) => json(res, 200, {}));
    gw = await startGateway(`
routes:
  - { method: GET, route: /a, service: ${backend.host}, path: /a }
  - { method: GET, route: /boom, service: ${backend.host}, path: /boom }
config:
  telemetry:
    otlpEndpoint: http://${collector.host}
    serviceName: edge-gateway
`);
  });
  after(() => closeAll(gw, collector, backend));

  /** Every span the collector received so far. */
  function received(): { spans: ExportedSpan[]; serviceNames: string[] } {
    const spans: ExportedSpan[] = [];
    const serviceNames: string[] = [];
    for (const s of collector.seen) {
      const body = JSON.parse(s.body.toString()) as {
        resourceSpans: {
          resource: { attributes: { key: string; value: { stringValue: string } }[] };
          scopeSpans: { spans: ExportedSpan[] }[];
        }[];
      };
      for (const rs of body.resourceSpans) {
        serviceNames.push(rs.resource.attributes.find((a) => a.key === 'service.name')!.value.stringValue);
        for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
    }
    return { spans, serviceNames };
  }

  async function waitForSpans(count: number): Promise<ExportedSpan[]> {
    // Timer-driven behaviour (batches leave every second): a bounded wait.
    await waitFor(() => received().spans.length >= count, 5_000, `${count} exported spans`);
    return received().spans;
  }

  it('exports a server span under the client span and a client span per backend call', async () => {
    // The exporter is loaded with a dynamic import: wait (bounded) until it records.
    await waitFor(() => gw.gateway.tracer.isRecording(), 5_000, 'the span exporter recording');
    assert.equal(gw.gateway.tracer.isRecording(), true);
    assert.equal(await getStatus(`${gw.url}/api/a`, { headers: { traceparent: `00-${TRACE}-${PARENT}-01` } }), 200);
    const spans = await waitForSpans(2);
    assert.equal(collector.seen[0]!.url, '/v1/traces');
    assert.equal(collector.seen[0]!.headers['content-type'], 'application/json');
    assert.deepEqual(received().serviceNames[0], 'edge-gateway');
    const server = spans.find((s) => s.kind === 2)!;
    const client = spans.find((s) => s.kind === 3)!;
    assert.equal(server.traceId, TRACE);
    assert.equal(server.parentSpanId, PARENT);
    assert.equal(server.name, 'GET /a');
    assert.equal(client.traceId, TRACE);
    assert.equal(client.parentSpanId, server.spanId);
    // The backend saw the client span's id as its parent.
    assert.equal(SHAPE.exec(String(backend.seen.at(-1)!.headers.traceparent))![2], client.spanId);
    assert.equal(client.name, `GET ${backend.host}`);
    assert.deepEqual(client.attributes.find((a) => a.key === 'http.response.status_code')?.value, { intValue: '200' });
    assert.deepEqual(server.attributes.find((a) => a.key === 'http.route')?.value, { stringValue: '/a' });
    const port = String(new URL(gw.url).port);
    assert.deepEqual(server.attributes.find((a) => a.key === 'server.address')?.value, { stringValue: '127.0.0.1' });
    assert.deepEqual(server.attributes.find((a) => a.key === 'server.port')?.value, { intValue: port });
    assert.deepEqual(client.attributes.find((a) => a.key === 'url.full')?.value, {
      stringValue: `http://${backend.host}/a`,
    });
    assert.ok(BigInt(server.startTimeUnixNano) <= BigInt(client.startTimeUnixNano));
    assert.ok(BigInt(client.endTimeUnixNano) <= BigInt(server.endTimeUnixNano));
    assert.ok(Math.abs(Number(BigInt(server.endTimeUnixNano) / 1_000_000n) - Date.now()) < 10_000);
  });

  it('marks a 5xx answer as an error, and exports nothing for a not-sampled trace', async () => {
    const before = received().spans.length;
    assert.equal(await getStatus(`${gw.url}/api/boom`, { headers: { traceparent: `00-${TRACE}-${PARENT}-00` } }), 500);
    assert.equal(await getStatus(`${gw.url}/api/boom`), 500);
    const spans = (await waitForSpans(before + 2)).slice(before);
    assert.equal(spans.length, 2);
    assert.notEqual(spans[0]!.traceId, TRACE);
    assert.deepEqual(
      spans.map((s) => s.status.code),
      [2, 2],
    );
    assert.equal(spans.find((s) => s.kind === 2)!.parentSpanId, undefined);
  });
});

describe('two gateways in one process', () => {
  let backend: TestBackend;
  let collector: TestBackend;
  let exporting: TestGateway;
  let quiet: TestGateway;
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, {}));
    collector = await startBackend((_req, res) => json(res, 200, {}));
    const routes = `routes:\n  - { method: GET, route: /a, service: ${backend.host}, path: /a }\n`;
    exporting = await startGateway(`${routes}config:\n  telemetry:\n    otlpEndpoint: http://${collector.host}\n`);
    quiet = await startGateway(`${routes}config:\n  telemetry:\n    sampleRatio: 0\n`);
  });
  after(() => closeAll(exporting, quiet, collector, backend));

  it('keep their own sampling and span export', async () => {
    await exporting.gateway.spanExporter();
    assert.equal(exporting.gateway.tracer.isRecording(), true);
    assert.equal(quiet.gateway.tracer.isRecording(), false);

    assert.equal(await getStatus(`${quiet.url}/api/a`), 200);
    const quietParent = String(backend.seen.at(-1)!.headers.traceparent);
    assert.equal(await getStatus(`${exporting.url}/api/a`), 200);
    const exportingParent = String(backend.seen.at(-1)!.headers.traceparent);
    // sampleRatio 0 belongs to the quiet gateway alone; the exporting one samples everything.
    assert.equal(SHAPE.exec(quietParent)![3], '00');
    assert.equal(SHAPE.exec(exportingParent)![3], '01');

    const exportedTraces = () =>
      collector.seen.flatMap((s) => {
        const body = JSON.parse(s.body.toString()) as {
          resourceSpans: { scopeSpans: { spans: { traceId: string }[] }[] }[];
        };
        return body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((sp) => sp.traceId)));
      });
    // The server span is queued when the response closes, batches leave every second.
    await waitFor(() => exportedTraces().length >= 2, 5_000, "the exporting gateway's spans");
    const traceIds = exportedTraces();
    assert.deepEqual([...new Set(traceIds)], [SHAPE.exec(exportingParent)![1]]);
  });
});
