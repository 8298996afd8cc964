/**
 * The standard OTEL_* environment variables drive span export end to end, against a real local
 * collector: the environment is passed to the config load, never set on process.env.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { getStatus } from '../support/http.js';

interface Attr {
  key: string;
  value: { stringValue?: string; intValue?: string };
}
interface Span {
  kind: number;
  name: string;
  attributes: Attr[];
}
interface Export {
  resourceSpans: { resource: { attributes: Attr[] }; scopeSpans: { spans: Span[] }[] }[];
}

function attr(attrs: Attr[], key: string): string | undefined {
  const v = attrs.find((a) => a.key === key)?.value;
  return v?.stringValue ?? v?.intValue;
}

describe('OTEL_* environment variables', () => {
  let backend: TestBackend;
  let collector: TestBackend;
  let gw: TestGateway | undefined;
  const routes = () => `
routes:
  - { method: GET, route: '/a/{id}', service: ${backend.host}, path: '/a/{id}' }
  - { method: GET, route: /boom, service: ${backend.host}, path: /boom }
`;

  before(async () => {
    backend = await startBackend((req, res) => json(res, req.url === '/boom' ? 502 : 200, {}));
    collector = await startBackend((_req, res) => json(res, 200, {}));
  });
  after(async () => {
    await gw?.close();
    await collector?.close();
    await backend?.close();
  });

  /** Starts a gateway, makes the requests, closes it (which sends every queued span): the exports. */
  async function run(
    yaml: string,
    env: NodeJS.ProcessEnv,
    paths: string[],
  ): Promise<{ exports: Export[]; urls: string[]; logs: Record<string, unknown>[]; recording: boolean }> {
    collector.seen.length = 0;
    gw = await startGateway(yaml, env);
    // The exporter starts asynchronously (its module is loaded on demand): requests wait for it.
    const exporter = await gw.gateway.spanExporter();
    const recording = gw.gateway.tracer.isRecording();
    assert.equal(exporter !== undefined, recording);
    for (const p of paths) await getStatus(`${gw.url}/api${p}`);
    const logs = gw.logs;
    await gw.close();
    gw = undefined;
    return {
      exports: collector.seen.map((s) => JSON.parse(s.body.toString()) as Export),
      urls: collector.seen.map((s) => s.url),
      logs,
      recording,
    };
  }

  it('exports with env vars alone: endpoint + /v1/traces, service name, decoded resource attributes, HTTP attribute names', async () => {
    const { exports, urls } = await run(
      routes(),
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://${collector.host}/`,
        OTEL_SERVICE_NAME: 'edge',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,team=api%2Cedge, region = eu%20west ',
      },
      ['/a/7', '/boom'],
    );
    assert.deepEqual([...new Set(urls)], ['/v1/traces']);
    const resource = exports[0]!.resourceSpans[0]!.resource.attributes;
    assert.equal(attr(resource, 'service.name'), 'edge');
    assert.equal(attr(resource, 'deployment.environment'), 'prod');
    assert.equal(attr(resource, 'team'), 'api,edge');
    assert.equal(attr(resource, 'region'), 'eu west');
    const spans = exports.flatMap((e) => e.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
    const servers = spans.filter((s) => s.kind === 2);
    const clients = spans.filter((s) => s.kind === 3);
    assert.equal(servers.length, 2);
    assert.equal(clients.length, 2);
    const ok = servers.find((s) => s.name === 'GET /a/{id}')!;
    assert.equal(attr(ok.attributes, 'http.request.method'), 'GET');
    assert.equal(attr(ok.attributes, 'http.route'), '/a/{id}');
    assert.equal(attr(ok.attributes, 'url.path'), '/api/a/7');
    assert.equal(attr(ok.attributes, 'url.scheme'), 'http');
    assert.equal(attr(ok.attributes, 'http.response.status_code'), '200');
    assert.equal(attr(ok.attributes, 'error.type'), undefined);
    const [host, port] = backend.host.split(':') as [string, string];
    const call = clients.find((s) => attr(s.attributes, 'url.full') === `http://${backend.host}/a/7`)!;
    assert.equal(attr(call.attributes, 'http.request.method'), 'GET');
    assert.equal(attr(call.attributes, 'server.address'), host);
    assert.equal(attr(call.attributes, 'server.port'), port);
    assert.equal(attr(call.attributes, 'http.response.status_code'), '200');
    const failed = clients.find((s) => attr(s.attributes, 'url.full') === `http://${backend.host}/boom`)!;
    assert.equal(attr(failed.attributes, 'error.type'), '502');
    assert.ok(attr(servers.find((s) => s.name === 'GET /boom')!.attributes, 'error.type'));
  });

  it('uses OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as-is, over OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    const { urls } = await run(
      routes(),
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://${collector.host}/custom/spans`,
      },
      ['/a/1'],
    );
    assert.deepEqual([...new Set(urls)], ['/custom/spans']);
  });

  it('lets the YAML file win over the environment', async () => {
    const { exports, urls } = await run(
      `${routes()}
config:
  telemetry:
    otlpEndpoint: http://${collector.host}/from-yaml
    serviceName: from-yaml
`,
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/v1/traces', OTEL_SERVICE_NAME: 'from-env' },
      ['/a/1'],
    );
    assert.deepEqual([...new Set(urls)], ['/from-yaml/v1/traces']);
    assert.equal(attr(exports[0]!.resourceSpans[0]!.resource.attributes, 'service.name'), 'from-yaml');
  });

  it('exports nothing with OTEL_SDK_DISABLED=true, even with an endpoint in the file', async () => {
    const yaml = `${routes()}
config:
  telemetry:
    otlpEndpoint: http://${collector.host}
`;
    const { urls, recording } = await run(
      yaml,
      { OTEL_EXPORTER_OTLP_ENDPOINT: `http://${collector.host}`, OTEL_SDK_DISABLED: 'true' },
      ['/a/1', '/a/2'],
    );
    assert.equal(recording, false);
    assert.deepEqual(urls, []);
    assert.equal(backend.seen.length > 0, true);
  });

  it('exports nothing with OTEL_TRACES_SAMPLER=always_off, and warns once about an unsupported sampler', async () => {
    const off = await run(
      routes(),
      { OTEL_EXPORTER_OTLP_ENDPOINT: `http://${collector.host}`, OTEL_TRACES_SAMPLER: 'always_off' },
      ['/a/1'],
    );
    assert.deepEqual(off.urls, []);
    const odd = await run(
      routes(),
      { OTEL_EXPORTER_OTLP_ENDPOINT: `http://${collector.host}`, OTEL_TRACES_SAMPLER: 'jaeger_remote' },
      ['/a/1'],
    );
    assert.ok(odd.urls.length > 0);
    const warnings = odd.logs.filter((l) => l.msg === 'OpenTelemetry setting not applied as written');
    assert.equal(warnings.length, 1);
    assert.match(String(warnings[0]!.warning), /jaeger_remote/);
  });

  it('samples by OTEL_TRACES_SAMPLER=parentbased_traceidratio with its argument', async () => {
    const yaml = `${routes()}
config:
  telemetry:
    otlpEndpoint: http://${collector.host}
`;
    const { urls } = await run(
      yaml,
      { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
      ['/a/1', '/a/2'],
    );
    assert.deepEqual(urls, []);
  });
});
