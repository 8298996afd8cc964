/**
 * Runs bench/open-loop-client.ts in a process of its own (pinned to the load core when given):
 * a constant request rate, latencies from each request's due time. The figures a goal on p99
 * "under normal load" means; wrk and autocannon (./load.ts) are closed-loop, they measure the
 * latency at saturation, where every microsecond of CPU the gateway spends shows in the p99.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { CACHE_DIR, ROOT, pinned, transpileEntry } from './processes.js';
import type { LoadResult } from './load.js';

export interface OpenLoopSpec {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Requests per second, whatever the answers do. */
  readonly rate: number;
  readonly durationSec: number;
  /** Connections the generator may open (enough that no request waits for one). */
  readonly connections: number;
  readonly core: number | undefined;
}

export interface OpenLoopResult extends LoadResult {
  readonly p999Ms: number;
  readonly maxMs: number;
}

let entry: string | undefined;

/** One timed open-loop run; rejects when the generator fails. */
export function runOpenLoop(spec: OpenLoopSpec): Promise<OpenLoopResult> {
  entry ??= transpileEntry(resolve(ROOT, 'bench/open-loop-client.ts'));
  const args = [
    entry,
    '--url',
    spec.url,
    '--method',
    spec.method,
    '--rate',
    String(spec.rate),
    '--seconds',
    String(spec.durationSec),
    '--connections',
    String(spec.connections),
  ];
  for (const [k, v] of Object.entries(spec.headers)) args.push('--header', `${k}:${v}`);
  if (spec.body !== undefined) {
    mkdirSync(CACHE_DIR, { recursive: true });
    const file = resolve(
      CACHE_DIR,
      `open-loop-${createHash('sha1').update(spec.body).digest('hex').slice(0, 12)}.body`,
    );
    writeFileSync(file, spec.body);
    args.push('--body-file', file);
  }
  const [command, argv] = pinned(spec.core, process.execPath, args);
  return new Promise((resolveOut, reject) => {
    // node_modules of the repository: the transpiled entry imports undici from CACHE_DIR.
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const killer = setTimeout(() => child.kill('SIGKILL'), (spec.durationSec + 30) * 1000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(killer);
      const line = /OPEN_LOOP_JSON (\{.*\})/.exec(stdout)?.[1];
      if (code !== 0 || line === undefined) {
        reject(new Error(`open-loop client exited with ${code}: ${stderr.slice(-1000)}`));
        return;
      }
      const r = JSON.parse(line) as OpenLoopResult & { durationSec: number };
      resolveOut({ ...r, rps: r.requests / r.durationSec });
    });
  });
}
