import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from './load.js';
import { formatProblem } from './problems.js';

function check(yaml: string): { problems: string[]; notices: string[]; kinds: string[] } {
  const r = loadConfigText(yaml, 'g.yaml', {});
  return r.ok
    ? { problems: [], notices: r.notices.map(formatProblem), kinds: r.config.routes.map((x) => x.kind) }
    : { problems: r.problems.map(formatProblem), notices: [], kinds: [] };
}

const H2C = `config:\n  basePath: "/"\n  http2: { cleartext: true }\n`;

describe('gRPC routes in portico check', () => {
  it('a gRPC route over h2c is valid, its kind is grpc and it streams its body', () => {
    const r = loadConfigText(
      `${H2C}routes:\n  - { method: POST, route: /echo.Echo/Unary, service: localhost:50051, path: /echo.Echo/Unary, grpc: true }\n`,
      'g.yaml',
      {},
    );
    assert.ok(r.ok, r.ok ? '' : r.problems.map(formatProblem).join('\n'));
    assert.equal(r.config.routes[0]!.kind, 'grpc');
    assert.equal(r.config.routes[0]!.buffersRequest, false);
    assert.deepEqual(r.notices.map(formatProblem), []);
  });

  it('refuses the keys of other route kinds, each at its own line', () => {
    const { problems } = check(`${H2C}routes:
  - method: POST
    route: /echo.Echo/Unary
    service: localhost:50051
    path: /echo.Echo/Unary
    grpc: true
    isSSE: true
    response: { allow: [a] }
    mapping: [{ path: "/u/{id}", service: "localhost:1", tag: u }]
`);
    assert.ok(
      problems.some((p) => p.startsWith('g.yaml:10:') && p.includes('routes[0].isSSE: a gRPC route')),
      problems.join('\n'),
    );
    assert.ok(
      problems.some((p) => p.startsWith('g.yaml:11:') && p.includes('routes[0].response: a gRPC route')),
      problems.join('\n'),
    );
    assert.ok(
      problems.some((p) => p.startsWith('g.yaml:12:') && p.includes('routes[0].mapping: a gRPC route')),
      problems.join('\n'),
    );
  });

  it("refuses compression: true and mirror, and never compresses a gRPC route's answers", () => {
    const { problems } = check(`${H2C}routes:
  - { method: POST, route: /a.B/C, service: localhost:50051, path: /a.B/C, grpc: true, compression: true,
      mirror: { service: "localhost:50052" } }
`);
    for (const key of ['compression', 'mirror'])
      assert.ok(
        problems.some((p) => p.includes(`routes[0].${key}: a gRPC route (grpc: true) cannot have it`)),
        problems.join('\n'),
      );
    const r = loadConfigText(
      `config:\n  basePath: "/"\n  http2: { cleartext: true }\n  compression: { enabled: true }\nroutes:\n  - { method: POST, route: /a.B/C, service: localhost:50051, path: /a.B/C, grpc: true }\n`,
      'g.yaml',
      {},
    );
    assert.ok(r.ok, r.ok ? '' : r.problems.map(formatProblem).join('\n'));
    assert.equal(r.config.routes[0]!.compresses, false);
  });

  it('refuses a WebSocket gRPC route and a method other than POST', () => {
    const { problems } = check(`${H2C}routes:
  - { method: GET, route: /a.B/C, service: localhost:50051, path: /a.B/C, grpc: true, isWebSocket: true }
`);
    assert.ok(
      problems.some((p) => p.includes('routes[0].isWebSocket: a gRPC route (grpc: true) cannot have it')),
      problems.join('\n'),
    );
    assert.ok(
      problems.some((p) => p.includes('routes[0].method: a gRPC route must use POST')),
      problems.join('\n'),
    );
  });

  it('refuses a gRPC route on a listener without HTTP/2, at the grpc key, with the fix', () => {
    const plain = check(`config:\n  basePath: "/"\nroutes:
  - method: POST
    route: /a.B/C
    service: localhost:50051
    path: /a.B/C
    grpc: true
`);
    assert.equal(plain.problems.length, 1, plain.problems.join('\n'));
    assert.match(
      plain.problems[0]!,
      /^g\.yaml:8:\d+: routes\[0\]\.grpc: gRPC needs HTTP\/2, and the plain listener serves HTTP\/1\.1 only/,
    );
    assert.match(plain.problems[0]!, /http2\.cleartext: true/);
    const tlsOff = check(`config:
  basePath: "/"
  http2: { enabled: false }
  tls: { certFile: c.pem, keyFile: k.pem }
routes:
  - { method: POST, route: /a.B/C, service: localhost:50051, path: /a.B/C, grpc: true }
`);
    assert.ok(
      tlsOff.problems.some((p) => p.includes('gRPC needs HTTP/2, and config.http2.enabled is false')),
      tlsOff.problems.join('\n'),
    );
  });

  it('warns that a basePath puts gRPC methods out of reach', () => {
    const { notices, problems } = check(`config:\n  http2: { cleartext: true }\nroutes:
  - { method: POST, route: /a.B/C, service: localhost:50051, path: /a.B/C, grpc: true }
`);
    assert.deepEqual(problems, []);
    assert.ok(
      notices.some((n) => n.includes('config.basePath "/api" puts out of reach')),
      notices.join('\n'),
    );
  });
});
