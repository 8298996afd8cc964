import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from './load.js';
import { formatProblem } from './problems.js';

const ROUTE = (service: string) => `routes:\n  - { method: GET, route: /a, service: "${service}", path: /a }\n`;

/** The problems (or, for a valid file, the notices) of `yaml`, as `portico check` prints them. */
function printed(yaml: string, env: NodeJS.ProcessEnv): string[] {
  const r = loadConfigText(yaml, 'g.yaml', env);
  return (r.ok ? r.notices : r.problems).map(formatProblem);
}

describe('problems never repeat a value from the environment', () => {
  const cases: { name: string; yaml: string; env: NodeJS.ProcessEnv; secret: string; shows: RegExp }[] = [
    {
      name: 'a service with a path and a key in its query',
      yaml: ROUTE('${SVC}'),
      env: { SVC: 'https://svc.example/base?key=svc-s3cr3t' },
      secret: 'svc-s3cr3t',
      shows: /service "\$\{SVC\}" must be a host only/,
    },
    {
      name: 'an OTLP endpoint that is no http URL',
      yaml: `${ROUTE('localhost:3000')}config:\n  telemetry: { otlpEndpoint: "\${OTLP}" }\n`,
      env: { OTLP: 'collector.example:4318/?token=otel-s3cr3t' },
      secret: 'otel-s3cr3t',
      shows: /otlpEndpoint: "\$\{OTLP\}" must be an http/,
    },
    {
      name: 'a value the schema refuses',
      yaml: 'routes:\n  - { method: "${METHOD}", route: /a, service: localhost:3000, path: /a }\n',
      env: { METHOD: 'FETCH-m3thod' },
      secret: 'FETCH-m3thod',
      shows: /method: "\$\{METHOD\}" is not one of/,
    },
    {
      name: 'a warning about a valid file',
      yaml: `${ROUTE('localhost:3000')}config:\n  admin: { port: 9901, host: "\${ADMIN_HOST}" }\n`,
      env: { ADMIN_HOST: '192.0.2.77' },
      secret: '192.0.2.77',
      shows: /config\.admin\.host: \$\{ADMIN_HOST\} lets other machines/,
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const lines = printed(c.yaml, c.env);
      assert.ok(lines.length > 0, 'a problem is reported');
      for (const line of lines) assert.ok(!line.includes(c.secret), line);
      assert.ok(
        lines.some((l) => c.shows.test(l)),
        lines.join('\n'),
      );
    });

  it('a JWKS URL with credentials is refused, and its credentials are not repeated', () => {
    const lines = printed(
      `${ROUTE('localhost:3000')}config:\n  auth: { jwksUrl: "https://user:jwks-s3cr3t@idp.example/keys" }\n`,
      {},
    );
    assert.deepEqual(lines, [
      'g.yaml:4:20: config.auth.jwksUrl: "https://***@idp.example/keys" must not contain credentials (the keys are fetched without them)',
    ]);
  });

  it('short values (ports, flags) are shown as they are', () => {
    const lines = printed(`${ROUTE('localhost:3000')}config:\n  port: \${PORT}\n  admin:\n    port: \${PORT}\n`, {
      PORT: '9000',
    });
    assert.ok(
      lines.some((l) => l.includes('config.admin.port: 9000 is the public port')),
      lines.join('\n'),
    );
  });
});
