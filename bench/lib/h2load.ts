/**
 * h2load (Debian's `nghttp2-client`) as the edge benches run it (bench/edge.ts,
 * bench/edge-cpu.ts), and the certificate they serve TLS with.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { findNginx } from './nginx.js';
import {
  CACHE_DIR,
  detectPinning,
  freePort,
  pinned,
  ROOT,
  startProcess,
  transpileEntry,
  type Pinning,
  type Started,
} from './processes.js';

/**
 * What an edge bench needs before it starts: the CPU pinning, nginx (the backend) and h2load,
 * each refused with how to install it when missing, and a temporary directory of its own.
 */
export function edgeSetup(name: string): { pinning: Pinning | undefined; nginx: string; dir: string } {
  const pinning = detectPinning(true);
  const nginx = findNginx();
  if (nginx === undefined) throw new Error('nginx is needed (apt-get install -y nginx)');
  if (spawnSync('h2load', ['--version']).error !== undefined)
    throw new Error('h2load is needed (apt-get install -y nghttp2-client)');
  mkdirSync(CACHE_DIR, { recursive: true });
  return { pinning, nginx, dir: mkdtempSync(join(tmpdir(), `portico-bench-${name}-`)) };
}

export interface H2loadResult {
  readonly rps: number;
  readonly done: number;
  readonly failed: number;
  readonly non2xx: number;
  readonly meanMs: number;
}

/** Runs h2load pinned to `core` and reads its summary. */
export function h2load(args: readonly string[], core: number | undefined): Promise<H2loadResult> {
  const [command, argv] = pinned(core, 'h2load', args);
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const rps = /finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(out);
      const requests =
        /requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out);
      const status = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
      const time = /time for request:\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)/.exec(out);
      if (code !== 0 || rps === null || requests === null || status === null)
        return reject(new Error(`h2load ${args.join(' ')} failed (${code}):\n${out}`));
      const unit = time?.[2] === 'us' ? 0.001 : time?.[2] === 's' ? 1000 : 1;
      resolvePromise({
        rps: Number(rps[1]),
        done: Number(requests[1]),
        failed: Number(requests[3]) + Number(requests[4]),
        non2xx: Number(status[2]) + Number(status[3]) + Number(status[4]),
        meanMs: time === null ? NaN : Number(time[1]) * unit,
      });
    });
  });
}

/** A self-signed ECDSA P-256 certificate for localhost and 127.0.0.1, made with openssl in `dir`. */
export function makeCertificate(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'edge.crt');
  const key = join(dir, 'edge.key');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-keyout',
      key,
      '-out',
      cert,
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'pipe' },
  );
  return { cert, key };
}

/** The Node floor (bench/node-floor.ts) in front of the backend on `backendPort`, with `extra` flags. */
export async function startFloor(backendPort: number, core: number | undefined, extra: string[]): Promise<Started> {
  return startProcess({
    name: 'node floor',
    command: process.execPath,
    args: [
      transpileEntry(resolve(ROOT, 'bench/node-floor.ts')),
      `http://127.0.0.1:${backendPort}`,
      String(await freePort()),
      ...extra,
    ],
    core,
    ready: { kind: 'stdout-line' },
  });
}

/**
 * The Node floor with Portico's default duties (bench/node-floor-duties.ts) in front of
 * `backendUrl`, over TLS when `tls` is given: its access lines go to a pipe drained on
 * `o.drainCore`, as Portico's; readiness by `/health` (on a plain port of its own with TLS).
 */
export async function startFloorDuties(
  backendUrl: string,
  o: {
    readonly core: number | undefined;
    readonly drainCore: number | undefined;
    readonly tls?: { cert: string; key: string };
    readonly nodeArgs?: readonly string[] | undefined;
    readonly name?: string;
  },
): Promise<Started & { port: number }> {
  const port = await freePort();
  const healthPort = o.tls === undefined ? port : await freePort();
  const started = await startProcess({
    name: o.name ?? 'node floor + duties',
    command: process.execPath,
    args: [
      ...(o.nodeArgs ?? []),
      transpileEntry(resolve(ROOT, 'bench/node-floor-duties.ts')),
      backendUrl,
      String(port),
      ...(o.tls === undefined ? [] : ['--tls', o.tls.cert, o.tls.key, '--health', String(healthPort)]),
    ],
    core: o.core,
    ready: { kind: 'health', port: healthPort, path: '/health' },
    stdout: 'drain',
    drainCore: o.drainCore,
  });
  return { ...started, port };
}
