/**
 * Rules on `config.admin` the schema cannot express: the admin listener never shares a port with
 * the public listener or the TLS redirect listener, and an admin listener reachable from other
 * machines without a token is worth a warning (docs/dashboard.md).
 */
import type { AddProblem } from './problems.js';
import { isRecord } from './raw-value.js';

/** Addresses only this machine reaches. */
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/i;

/** Checks `config.admin`; `warn` takes what does not stop a start. */
export function adminRules(raw: Record<string, unknown>, at: AddProblem, warn: AddProblem): void {
  const config = isRecord(raw.config) ? raw.config : undefined;
  const admin = config !== undefined && isRecord(config.admin) ? config.admin : undefined;
  if (admin === undefined) return;
  const port = admin.port;
  // Port 0 picks a free port at listen time: it can never collide.
  if (typeof port === 'number' && port !== 0) {
    const publicPort = config?.port ?? 8080;
    if (port === publicPort)
      at(
        ['config', 'admin', 'port'],
        `config.admin.port: ${port} is the public port (config.port); the admin listener needs a port of its own`,
      );
    const tls = isRecord(config?.tls) ? config.tls : undefined;
    if (tls !== undefined && port === tls.redirectPort)
      at(['config', 'admin', 'port'], `config.admin.port: ${port} is config.tls.redirectPort; choose another port`);
  }
  const host = typeof admin.host === 'string' ? admin.host : '127.0.0.1';
  if (!LOOPBACK.test(host) && admin.token === undefined)
    warn(
      ['config', 'admin', 'host'],
      `config.admin.host: ${host} lets other machines read the status page without a token`,
      'set config.admin.token: ${ADMIN_TOKEN}',
    );
}
