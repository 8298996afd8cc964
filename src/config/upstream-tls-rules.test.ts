import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { loadConfigText } from './load.js';
import { formatProblem } from './problems.js';
import { createTestCa, type TestCa } from '../../test/support/certs.js';

const ROUTE = 'routes:\n  - { method: GET, route: /a, service: "https://localhost:8443", path: /a }\n';

describe('TLS to backends: check and compile', () => {
  let ca: TestCa;
  let a: { certFile: string; keyFile: string };
  let b: { certFile: string; keyFile: string };
  let file: string;
  before(() => {
    ca = createTestCa();
    a = ca.issue('portico-a', 'client-a');
    b = ca.issue('portico-b', 'client-b');
    writeFileSync(join(ca.dir, 'not-pem.txt'), 'hello\n');
    // Relative paths are read from the configuration file's folder.
    file = join(ca.dir, 'gateway.yaml');
  });
  after(() => ca.remove());

  const load = (yaml: string) => loadConfigText(yaml, file, {});
  const problems = (yaml: string) => {
    const r = load(yaml);
    return r.ok ? [] : r.problems.map((p) => formatProblem(p).replace(`${file}:`, ''));
  };

  it('refuses a certificate without its key and a key without its certificate', () => {
    assert.deepEqual(
      problems(
        `${ROUTE}upstreams:\n  pay:\n    targets: ["https://localhost:9443"]\n    tls: { keyFile: ${a.keyFile} }\n` +
          `config:\n  upstreamTls: { certFile: ${a.certFile} }\n`,
      ),
      [
        `6:21: upstreams.pay.tls.keyFile: a private key needs certFile, the client certificate it belongs to (set certFile beside keyFile, or remove keyFile)`,
        `8:28: config.upstreamTls.certFile: a client certificate needs keyFile, its private key (set keyFile beside certFile, or remove certFile)`,
      ],
    );
  });

  it('refuses a key that is not the certificate’s, a file that is not PEM, a file that is missing', () => {
    assert.deepEqual(
      problems(
        `${ROUTE}config:\n  upstreamTls:\n    certFile: ${a.certFile}\n    keyFile: ${b.keyFile}\n    caFile: not-pem.txt\n`,
      ),
      [
        `6:14: config.upstreamTls.keyFile: "${b.keyFile}" is not the private key of the certificate in "${a.certFile}"`,
        `7:13: config.upstreamTls.caFile: "not-pem.txt" is not a PEM file (no -----BEGIN line)`,
      ],
    );
    assert.deepEqual(problems(`${ROUTE}config:\n  upstreamTls: { certFile: nope.crt, keyFile: not-pem.txt }\n`), [
      `4:28: config.upstreamTls.certFile: cannot read "nope.crt": no such file`,
      `4:47: config.upstreamTls.keyFile: "not-pem.txt" is not a PEM file (no -----BEGIN line)`,
    ]);
  });

  it('warns when a named upstream has TLS settings but no https:// target', () => {
    const r = load(`${ROUTE}upstreams:\n  pay:\n    targets: ["127.0.0.1:9000"]\n    tls: { caFile: ca.crt }\n`);
    assert.ok(r.ok);
    assert.deepEqual(
      r.notices.map((p) => formatProblem(p).replace(`${file}:`, '')),
      ['6:10: warning: upstreams.pay.tls: every target is plain HTTP; TLS settings apply to https:// targets only'],
    );
  });

  it('reads the files relative to the configuration, and a named upstream falls back key by key', () => {
    const routes = ['own', 'ca', 'none'].map((u) => `  - { method: GET, route: /${u}, service: ${u}, path: /x }\n`);
    const r = load(
      `${ROUTE}${routes.join('')}upstreams:\n` +
        `  own: { targets: ["https://localhost:9443"], tls: { certFile: ${b.certFile}, keyFile: ${b.keyFile} } }\n` +
        `  ca: { targets: ["https://localhost:9444"], tls: { caFile: ca.crt, rejectUnauthorized: false } }\n` +
        `  none: { targets: ["https://localhost:9445"] }\n` +
        `config:\n  upstreamTls: { certFile: ${basename(a.certFile)}, keyFile: ${basename(a.keyFile)} }\n`,
    );
    assert.ok(r.ok, r.ok ? '' : r.problems.map(formatProblem).join('\n'));
    const global = r.config.upstreamTls!;
    assert.ok(global.cert?.toString().includes('BEGIN CERTIFICATE'));
    assert.equal(global.ca, undefined);
    assert.equal(global.rejectUnauthorized, true);
    const spec = (name: string) => r.config.routes.find((route) => route.service === name)!.origin.upstream!.tls!;
    const own = spec('own');
    assert.notEqual(own.id, global.id);
    assert.ok(own.cert !== undefined && !own.cert.equals(global.cert!));
    const caOnly = spec('ca');
    assert.ok(caOnly.ca?.toString().includes('BEGIN CERTIFICATE'));
    assert.ok(caOnly.cert!.equals(global.cert!));
    assert.equal(caOnly.rejectUnauthorized, false);
    assert.equal(spec('none'), global);
    // The same files and settings load to the same identity: a reload keeps the pools.
    const again = load(`${ROUTE}config:\n  upstreamTls: { certFile: ${a.certFile}, keyFile: ${a.keyFile} }\n`);
    assert.ok(again.ok);
    assert.equal(again.config.upstreamTls!.id, global.id);
  });
});
