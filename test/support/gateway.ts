/**
 * The real gateway on 127.0.0.1:0, from YAML text. Logs are captured in `logs` (parsed JSON lines)
 * so tests can assert what was logged.
 */
import type { AddressInfo } from 'node:net';
import { loadConfigText } from '../../src/config/load.js';
import { formatProblem } from '../../src/config/problems.js';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/gateway.js';
import { captureLogger } from './capture-logger.js';
import { get, type GetOptions, type Reply } from './http.js';

export interface TestGateway {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  readonly port: number;
  readonly gateway: Gateway;
  /** Every log line written so far, parsed. */
  readonly logs: Record<string, unknown>[];
  /** GET `path` (e.g. `/api/a`) on this gateway and read the whole answer. */
  get(path: string, options?: GetOptions): Promise<Reply>;
  /** Reloads from new YAML text; throws on problems like `start` would refuse. */
  reload(yaml: string): void;
  close(): Promise<void>;
}

/** `options`: GatewayOptions besides the config and logger (e.g. shorter tunnel bounds). */
export async function startGateway(
  yaml: string,
  env: NodeJS.ProcessEnv = process.env,
  options: Omit<GatewayOptions, 'config' | 'logger'> = {},
): Promise<TestGateway> {
  const loaded = loadConfigText(yaml, 'test.yaml', env);
  if (!loaded.ok) throw new Error(`test config invalid:\n${loaded.problems.map(formatProblem).join('\n')}`);
  const { logger, lines: logs } = captureLogger();
  const gateway = createGateway({ drainTimeoutMs: 2_000, ...options, config: loaded.config, logger });
  const address: AddressInfo = await gateway.listen(0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    gateway,
    logs,
    get: (path, getOptions) => get(`http://127.0.0.1:${address.port}${path}`, getOptions),
    reload(next) {
      const r = loadConfigText(next, 'test.yaml', env);
      if (!r.ok) throw new Error(r.problems.map(formatProblem).join('\n'));
      gateway.reload(r.config);
    },
    close: () => gateway.close(),
  };
}
