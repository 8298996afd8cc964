/**
 * TLS on the listener (`config.tls`) end to end, with certificates the test makes with openssl:
 * HTTPS answers with HSTS and X-Forwarded-Proto https to the backend; a second certificate by
 * server name (SNI); client certificates required (mTLS, over HTTP/1.1 and HTTP/2); a reload
 * that swaps the certificate for new handshakes while an open connection keeps its own; the
 * plain-HTTP redirect listener; and `portico check` on bad TLS files.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:http2';
import { h2request } from '../support/http2.js';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { createTestCa, type TestCa } from '../support/certs.js';
import { loadConfigText } from '../../src/config/load.js';
import { formatProblem } from '../../src/config/problems.js';
import { tlsRules } from '../../src/config/tls-rules.js';

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  /** SHA-256 fingerprint of the certificate the server presented. */
  readonly fingerprint: string;
}

function get(port: number, path: string, options: RequestOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, servername: 'localhost', ...options }, (res) => {
      const fingerprint = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, fingerprint }));
    });
    req.on('error', reject);
    req.end();
  });
}

const fingerprintOf = (certFile: string) => new X509Certificate(readFileSync(certFile)).fingerprint256;

describe('config.tls', () => {
  let ca: TestCa;
  let backend: TestBackend;
  let gw: TestGateway;
  let files: { main: { certFile: string; keyFile: string }; api: { certFile: string; keyFile: string } };
  const yaml = (certFile: string, keyFile: string, extra = '') => `
config:
  tls:
    certFile: ${certFile}
    keyFile: ${keyFile}
    hstsMaxAgeSec: 31536000
    redirectPort: 0
    sni:
      api.example.test: { certFile: ${files.api.certFile}, keyFile: ${files.api.keyFile} }
${extra}
routes:
  - { method: GET, route: /hello, service: ${backend.host}, path: /hello, public: true }
`;
  before(async () => {
    ca = createTestCa();
    files = { main: ca.issue('localhost'), api: ca.issue('api.example.test') };
    backend = await startBackend((req, res) => json(res, 200, { proto: req.headers['x-forwarded-proto'] }));
    gw = await startGateway(yaml(files.main.certFile, files.main.keyFile));
  });
  after(async () => {
    await gw.close();
    await backend.close();
    ca.remove();
  });

  const caPem = () => readFileSync(ca.caFile);

  it('serves HTTPS: the backend sees https, the client gets HSTS', async () => {
    const r = await get(gw.port, '/api/hello', { ca: caPem() });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.body), { proto: 'https' });
    assert.equal(r.headers['strict-transport-security'], 'max-age=31536000');
    assert.equal(r.fingerprint, fingerprintOf(files.main.certFile));
    // Gateway errors carry it too.
    const missing = await get(gw.port, '/api/nothing', { ca: caPem() });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['strict-transport-security'], 'max-age=31536000');
  });

  it('picks the certificate by server name (SNI)', async () => {
    const r = await get(gw.port, '/api/hello', {
      ca: caPem(),
      servername: 'api.example.test',
      headers: { host: 'api.example.test' },
    });
    assert.equal(r.fingerprint, fingerprintOf(files.api.certFile));
    assert.equal(r.status, 200);
  });

  it('refuses TLS 1.1 (minVersion TLSv1.2 by default)', async () => {
    await assert.rejects(get(gw.port, '/api/hello', { ca: caPem(), maxVersion: 'TLSv1.1', minVersion: 'TLSv1' }));
  });

  it('a reload swaps the certificate for new handshakes; an open connection keeps its own', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: caPem() });
    const first = await get(gw.port, '/api/hello', { agent });
    const next = ca.issue('localhost', 'localhost-2');
    gw.reload(yaml(next.certFile, next.keyFile));
    const again = await get(gw.port, '/api/hello', { agent });
    assert.equal(again.fingerprint, first.fingerprint, 'the kept-alive connection keeps its certificate');
    const fresh = await get(gw.port, '/api/hello', { ca: caPem(), agent: false });
    assert.equal(fresh.fingerprint, fingerprintOf(next.certFile));
    agent.destroy();
  });

  it('the redirect listener answers 308 to https, and serves /health', async () => {
    const port = gw.gateway.redirectAddress()!.port;
    const plain = (path: string) =>
      new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port, path, headers: { host: `gw.example.test:${port}` } },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    assert.deepEqual(await plain('/api/hello?x=1'), {
      status: 308,
      location: `https://gw.example.test:${gw.port}/api/hello?x=1`,
    });
    assert.deepEqual(await plain('/health'), { status: 200, location: undefined });
  });
});

describe('config.tls with client certificates required', () => {
  let ca: TestCa;
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    ca = createTestCa();
    const server = ca.issue('localhost');
    backend = await startBackend((req, res) => json(res, 200, { subject: req.headers['x-client-subject'] ?? null }));
    gw = await startGateway(`
config:
  tls:
    certFile: ${server.certFile}
    keyFile: ${server.keyFile}
    caFile: ${ca.caFile}
    clientAuth: required
    clientSubjectHeader: X-Client-Subject
routes:
  - { method: GET, route: /hello, service: ${backend.host}, path: /hello, public: true }
`);
  });
  after(async () => {
    await gw.close();
    await backend.close();
    ca.remove();
  });

  it('refuses a client without a certificate; one the CA signed is served, its subject sent to the backend', async () => {
    const caPem = readFileSync(ca.caFile);
    await assert.rejects(get(gw.port, '/api/hello', { ca: caPem, agent: false }));
    const client = ca.issue('client-1');
    const r = await get(gw.port, '/api/hello', {
      ca: caPem,
      cert: readFileSync(client.certFile),
      key: readFileSync(client.keyFile),
      agent: false,
      headers: { 'x-client-subject': 'CN=forged' },
    });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.body), { subject: 'CN=client-1' });
  });

  it('an h2 client without a certificate is refused; with one, its subject reaches the backend', async () => {
    const caPem = readFileSync(ca.caFile);
    const anonymous = connect(`https://localhost:${gw.port}`, { ca: caPem });
    anonymous.on('error', () => undefined);
    await assert.rejects(h2request(anonymous, '/api/hello'));
    anonymous.destroy();
    const client = ca.issue('client-h2');
    const session = connect(`https://localhost:${gw.port}`, {
      ca: caPem,
      cert: readFileSync(client.certFile),
      key: readFileSync(client.keyFile),
    });
    try {
      const r = await h2request(session, '/api/hello', { 'x-client-subject': 'CN=forged' });
      assert.equal(r.status, 200);
      assert.deepEqual(JSON.parse(r.body), { subject: 'CN=client-h2' });
    } finally {
      session.close();
    }
  });
});

describe('a reload that changes config.tls.clientAuth', () => {
  let ca: TestCa;
  let backend: TestBackend;
  let gw: TestGateway;
  let server: { readonly certFile: string; readonly keyFile: string };
  const yaml = (clientAuth: string) => `
config:
  tls: { certFile: ${server.certFile}, keyFile: ${server.keyFile}, caFile: ${ca.caFile}, clientAuth: ${clientAuth} }
routes:
  - { method: GET, route: /hello, service: ${backend.host}, path: /hello, public: true }
`;
  before(async () => {
    ca = createTestCa();
    server = ca.issue('localhost');
    backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    gw = await startGateway(yaml('optional'));
  });
  after(async () => {
    await gw.close();
    await backend.close();
    ca.remove();
  });

  it('applies to new connections: optional, then required, then none', async () => {
    const caPem = readFileSync(ca.caFile);
    const anonymous = () => get(gw.port, '/api/hello', { ca: caPem, agent: false });
    assert.equal((await anonymous()).status, 200);
    gw.reload(yaml('required'));
    await assert.rejects(anonymous());
    const client = ca.issue('client-1');
    const signed = await get(gw.port, '/api/hello', {
      ca: caPem,
      cert: readFileSync(client.certFile),
      key: readFileSync(client.keyFile),
      agent: false,
    });
    assert.equal(signed.status, 200);
    gw.reload(yaml('none'));
    assert.equal((await anonymous()).status, 200);
  });
});

describe('portico check: config.tls', () => {
  let ca: TestCa;
  before(() => {
    ca = createTestCa();
  });
  after(() => ca.remove());
  const problems = (tls: string) => {
    const r = loadConfigText(
      `config:
  tls: ${tls}
routes:
  - { method: GET, route: /a, service: "127.0.0.1:9", path: /a }
`,
      join(ca.dir, 'g.yaml'),
      {},
    );
    return r.ok ? [] : r.problems.map(formatProblem).map((l) => l.replace(ca.dir, 'DIR'));
  };

  it('reports a missing file, a key that is not the certificate’s, a file that is not PEM, clientAuth without caFile', () => {
    const a = ca.issue('a.test');
    const b = ca.issue('b.test');
    writeFileSync(join(ca.dir, 'not.pem'), 'hello');
    assert.deepEqual(problems(`{ certFile: nope.crt, keyFile: ${a.keyFile} }`), [
      'DIR/g.yaml:2:20: config.tls.certFile: cannot read "nope.crt": no such file',
    ]);
    assert.deepEqual(problems(`{ certFile: ${a.certFile}, keyFile: ${b.keyFile} }`).length, 1);
    assert.match(
      problems(`{ certFile: ${a.certFile}, keyFile: ${b.keyFile} }`)[0]!,
      /config\.tls\.keyFile: ".*b\.test\.key" is not the private key of the certificate/,
    );
    assert.match(
      problems(`{ certFile: not.pem, keyFile: ${a.keyFile} }`)[0]!,
      /config\.tls\.certFile: "not\.pem" is not a PEM file/,
    );
    assert.match(
      problems(`{ certFile: ${a.certFile}, keyFile: ${a.keyFile}, clientAuth: required }`)[0]!,
      /config\.tls\.clientAuth: required needs config\.tls\.caFile/,
    );
    assert.deepEqual(problems(`{ certFile: a.test.crt, keyFile: a.test.key }`), [], 'paths are relative to the file');
  });

  it('refuses h2c (http2.cleartext) on a TLS listener', () => {
    assert.deepEqual(problems(`{ certFile: a.test.crt, keyFile: a.test.key }\n  http2: { cleartext: true }`), [
      'DIR/g.yaml:3:23: config.http2.cleartext: h2c is for a plain listener; with config.tls, HTTP/2 is offered by ALPN (http2.enabled)',
    ]);
  });

  it('warns about an expired certificate', () => {
    const a = ca.issue('c.test');
    const warnings: string[] = [];
    tlsRules(
      { config: { tls: { certFile: a.certFile, keyFile: a.keyFile } } },
      ca.dir,
      () => assert.fail('no error expected'),
      (_path, message) => warnings.push(message),
      new Date('2100-01-01T00:00:00Z'),
    );
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /config\.tls\.certFile: the certificate expired on .*; clients will refuse it/);
  });
});
