/**
 * A gateway started from source as a child process and measured with autocannon: what the auth
 * benches (auth-modes.ts, introspection.ts) share. Each starts its gateways with their own
 * configuration files and compares rows of one run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { porticoCli, ROOT } from './processes.js';

export { freePort } from './processes.js';

/** `portico start` (the build when current: processes.ts porticoCli) on 127.0.0.1:`port`; stderr shown, stdout dropped. */
export function startGateway(config: string, port: number): ChildProcess {
  return spawn(
    process.execPath,
    [...porticoCli(), 'start', '--config', config, '--port', String(port), '--host', '127.0.0.1'],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
}

export interface CannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number; max: number };
  non2xx: number;
  errors: number;
}

/** autocannon's JSON result for `seconds` of load on `url`. */
export function autocannon(
  url: string,
  headers: string[],
  connections: number,
  seconds: number,
): Promise<CannonResult> {
  const args = [
    join(ROOT, 'node_modules/autocannon/autocannon.js'),
    '-j',
    '-c',
    String(connections),
    '-d',
    String(seconds),
    ...headers.flatMap((h) => ['-H', h]),
    url,
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) =>
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(out) as CannonResult) : reject(new Error(`autocannon exited ${code}`)),
    ),
  );
}

/** The first line a child writes on stdout (a backend's ready line). */
export function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      const i = buf.indexOf('\n');
      if (i >= 0) resolve(buf.slice(0, i));
    });
    child.on('exit', (code) => reject(new Error(`server process exited ${code}`)));
  });
}

/** Resolves once the gateway on `port` answers /health (a cold tsx start takes a while on a busy machine). */
export async function waitHealthy(port: number, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gateway on port ${port} did not become healthy`);
}
