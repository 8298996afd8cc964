/**
 * Certificates for TLS tests, made by the test with openssl (never committed): a CA, and leaf
 * certificates it signs for a name (server certificates with their SAN, client certificates).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCa {
  readonly dir: string;
  /** The CA certificate's path. */
  readonly caFile: string;
  /** A certificate signed by the CA for `name` (a DNS name, or an IP), and its key: file paths. */
  issue(name: string, file?: string): { readonly certFile: string; readonly keyFile: string };
  remove(): void;
}

const openssl = (args: string[], cwd: string) => execFileSync('openssl', args, { cwd, stdio: 'pipe' });
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export function createTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'portico-tls-'));
  openssl(
    ['req', '-x509', ...EC, '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=Portico Test CA', '-days', '2'],
    dir,
  );
  let serial = 1;
  return {
    dir,
    caFile: join(dir, 'ca.crt'),
    issue(name, file = name.replace(/[^A-Za-z0-9.-]/g, '_')) {
      const san = /^[0-9.]+$/.test(name) ? `IP:${name}` : `DNS:${name}`;
      writeFileSync(join(dir, `${file}.ext`), `subjectAltName=${san}\nextendedKeyUsage=serverAuth,clientAuth\n`);
      openssl(['req', ...EC, '-keyout', `${file}.key`, '-out', `${file}.csr`, '-subj', `/CN=${name}`], dir);
      openssl(
        [
          'x509',
          '-req',
          '-in',
          `${file}.csr`,
          '-CA',
          'ca.crt',
          '-CAkey',
          'ca.key',
          '-set_serial',
          String(serial++),
        ].concat(['-out', `${file}.crt`, '-days', '1', '-extfile', `${file}.ext`]),
        dir,
      );
      return { certFile: join(dir, `${file}.crt`), keyFile: join(dir, `${file}.key`) };
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
