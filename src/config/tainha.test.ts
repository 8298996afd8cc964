import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from './load.js';
import { formatProblem } from './problems.js';

const ROUTES = `routes:
  - method: GET
    route: /a
    service: localhost:3000
    path: /a
`;

function load(config: string) {
  const r = loadConfigText(`${ROUTES}config:\n${config}`, 'g.yaml', {});
  if (!r.ok) assert.fail(r.problems.map(formatProblem).join('\n'));
  return { config: r.config, notes: r.notices.map(formatProblem) };
}

function problems(config: string): string[] {
  const r = loadConfigText(`${ROUTES}config:\n${config}`, 'g.yaml', {});
  return r.ok ? [] : r.problems.map(formatProblem);
}

describe('tainha-gateway telemetry keys', () => {
  it('enabled: true keeps metrics and propagation on, and says so', () => {
    const { config, notes } = load('  telemetry:\n    enabled: true\n');
    assert.equal(config.settings.telemetry.metrics, true);
    assert.equal(config.settings.telemetry.propagation, true);
    assert.deepEqual(notes, [
      'g.yaml:8:14: note: config.telemetry.enabled: true -> telemetry.metrics: true and telemetry.propagation: true',
    ]);
  });

  it('enabled: false turns metrics and propagation off, as tainha-gateway does', () => {
    const { config, notes } = load('  telemetry: { enabled: false }\n');
    assert.equal(config.settings.telemetry.metrics, false);
    assert.equal(config.settings.telemetry.propagation, false);
    assert.deepEqual(notes, [
      'g.yaml:7:25: note: config.telemetry.enabled: false -> telemetry.metrics: false and telemetry.propagation: false',
    ]);
  });

  it("exporterEndpoint becomes otlpEndpoint: the collector's OTLP/HTTP port for 4317, http:// when no scheme", () => {
    const cases = [
      ['jaeger:4317', 'http://jaeger:4318'],
      ['http://u:secret@c:4318?k=v', 'http://u:secret@c:4318?k=v', 'http://***@c:4318/?***'],
      ['localhost:4317', 'http://localhost:4318'],
      ['collector:55681', 'http://collector:55681'],
      ['https://otel.example.com', 'https://otel.example.com'],
    ];
    for (const [written, endpoint, shown = endpoint] of cases) {
      const { config, notes } = load(`  telemetry: { enabled: true, exporterEndpoint: "${written}" }\n`);
      assert.equal(config.settings.telemetry.otlpEndpoint, endpoint);
      if (!endpoint!.includes('?')) assert.equal(config.tracing?.tracesUrl, `${endpoint}/v1/traces`);
      const shownWritten = written!.includes('@') ? shown : written;
      assert.ok(
        notes.at(-1)!.includes(`exporterEndpoint: ${shownWritten} -> telemetry.otlpEndpoint: ${shown} (`),
        notes.at(-1),
      );
    }
  });

  it('exporterEndpoint exports nothing without enabled: true, as in tainha-gateway', () => {
    const { config, notes } = load('  telemetry:\n    exporterEndpoint: localhost:4317\n');
    assert.equal(config.settings.telemetry.otlpEndpoint, undefined);
    assert.equal(config.tracing?.tracesUrl, undefined);
    assert.deepEqual(notes, [
      'g.yaml:8:23: note: config.telemetry.exporterEndpoint: localhost:4317 -> not used: spans are exported only with telemetry.enabled: true (Portico: telemetry.otlpEndpoint)',
    ]);
  });

  it('refuses a tainha key together with the Portico key it stands for', () => {
    assert.deepEqual(problems('  telemetry: { enabled: false, metrics: true }\n'), [
      'g.yaml:7:25: config.telemetry.enabled and config.telemetry.metrics both turn metrics on or off (keep one of them)',
    ]);
    assert.deepEqual(
      problems('  telemetry: { enabled: true, exporterEndpoint: "a:4317", otlpEndpoint: "http://b:4318" }\n'),
      [
        'g.yaml:7:49: config.telemetry.exporterEndpoint and config.telemetry.otlpEndpoint both name the span collector (keep one of them)',
      ],
    );
  });

  it('refuses an exporterEndpoint that is neither HOST:PORT nor an http(s) URL', () => {
    assert.deepEqual(problems('  telemetry: { enabled: true, exporterEndpoint: "grpc://c:4317" }\n'), [
      'g.yaml:7:49: config.telemetry.exporterEndpoint: "grpc://c:4317" must be HOST:PORT (as for tainha-gateway) or an http:// or https:// URL',
    ]);
    assert.deepEqual(problems('  telemetry: { enabled: true, exporterEndpoint: "[::1]:4317" }\n'), []);
    assert.deepEqual(problems('  telemetry: { enabled: true, exporterEndpoint: "grpc://u:secret@c:4317" }\n'), [
      'g.yaml:7:49: config.telemetry.exporterEndpoint: "grpc://***@c:4317" must be HOST:PORT (as for tainha-gateway) or an http:// or https:// URL',
    ]);
  });
});

describe('tainha-gateway auth.algorithm', () => {
  it('is accepted and not used, as in tainha-gateway: the key decides the algorithm', () => {
    const { notes } = load('  auth:\n    secret: 0123456789abcdef0123456789abcdef\n    algorithm: HS256\n');
    assert.deepEqual(notes, [
      'g.yaml:9:16: note: config.auth.algorithm: HS256 -> not used: Portico takes the algorithm from the key (auth.secret: HS256, HS384 or HS512; auth.jwksUrl: the key that signed the token)',
    ]);
  });
});
