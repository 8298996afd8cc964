/**
 * Candidate processes for the load benchmark: each one runs alone, pinned to a core when `taskset`
 * exists (issue #8: proxy on core 0, load generator and backend on core 1), and its memory is read
 * from /proc/<pid>/status. Bench entry files (.ts) are transpiled once to plain .mjs so candidates
 * run without a TypeScript loader in their heap or on their CPU.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, resolve } from 'node:path';
import ts from 'typescript';

export const ROOT = resolve(import.meta.dirname, '../..');
/** Generated files (transpiled entries, YAML, wrk scripts): ignored by git via node_modules/. */
export const CACHE_DIR = resolve(ROOT, 'node_modules/.cache/portico-bench');

/** Core assignment, or undefined when pinning is impossible (no taskset, one core) or disabled. */
export interface Pinning {
  readonly proxyCore: number;
  readonly loadCore: number;
}

export function detectPinning(enabled: boolean): Pinning | undefined {
  if (!enabled || availableParallelism() < 2) return undefined;
  const probe = spawnSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' });
  return probe.status === 0 ? { proxyCore: 0, loadCore: 1 } : undefined;
}

/** Prefixes a command with `taskset -c CORE` when pinning is on. */
export function pinned(core: number | undefined, command: string, args: readonly string[]): [string, string[]] {
  return core === undefined ? [command, [...args]] : ['taskset', ['-c', String(core), command, ...args]];
}

/** Transpiles a self-contained bench entry (only package and node: imports) to CACHE_DIR/<name>.mjs. */
export function transpileEntry(file: string): string {
  mkdirSync(CACHE_DIR, { recursive: true });
  const out = resolve(CACHE_DIR, basename(file).replace(/\.ts$/, '.mjs'));
  const result = ts.transpileModule(readFileSync(file, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    fileName: file,
  });
  writeFileSync(out, result.outputText);
  return out;
}

export interface Started {
  readonly name: string;
  readonly pid: number;
  readonly port: number;
  /** Last lines the process wrote on stderr (for failure reports). */
  stderrTail(): string;
  stop(): Promise<void>;
}

export interface StartOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly core: number | undefined;
  readonly env?: NodeJS.ProcessEnv;
  /** How readiness is known: a `{"ready":true,"port":N}` stdout line, or 200 on a health URL. */
  readonly ready: { readonly kind: 'stdout-line' } | { readonly kind: 'health'; readonly port: number; readonly path: string };
  readonly timeoutMs?: number;
}

/** Starts a process and resolves once it serves. Stdout is discarded after readiness (logs cost the candidate, not us). */
export async function startProcess(o: StartOptions): Promise<Started> {
  const [command, args] = pinned(o.core, o.command, o.args);
  // A health-checked process writes logs to stdout: send them to /dev/null, never through a pipe
  // we would have to drain on the load generator's core.
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...o.env },
    stdio: ['ignore', o.ready.kind === 'stdout-line' ? 'pipe' : 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const timeoutMs = o.timeoutMs ?? 15_000;
  const port = await Promise.race([
    o.ready.kind === 'stdout-line' ? readyLine(child) : waitHealthy(o.ready.port, o.ready.path, timeoutMs),
    exited.then((code) => Promise.reject(new Error(`${o.name} exited (code ${code}) before it was ready:\n${stderr.trim()}`))),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${o.name} not ready after ${timeoutMs} ms:\n${stderr.trim()}`)), timeoutMs).unref()),
  ]).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  return {
    name: o.name,
    pid: child.pid ?? -1,
    port,
    stderrTail: () => stderr.trim(),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(forced);
    },
  };
}

function readyLine(child: ChildProcess): Promise<number> {
  return new Promise((resolveReady, reject) => {
    let buffered = '';
    const onData = (c: Buffer) => {
      buffered += c.toString('utf8');
      const nl = buffered.indexOf('\n');
      if (nl < 0) return;
      child.stdout?.off('data', onData);
      child.stdout?.resume(); // keep draining anything later written
      try {
        const msg = JSON.parse(buffered.slice(0, nl)) as { ready?: boolean; port?: number };
        if (msg.ready === true && typeof msg.port === 'number') resolveReady(msg.port);
        else reject(new Error(`unexpected ready line: ${buffered.slice(0, nl)}`));
      } catch {
        reject(new Error(`unexpected ready line: ${buffered.slice(0, nl)}`));
      }
    };
    child.stdout?.on('data', onData);
  });
}

async function waitHealthy(port: number, path: string, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.status === 200) return port;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no 200 from http://127.0.0.1:${port}${path} within ${timeoutMs} ms`);
}

/** A free TCP port on 127.0.0.1 (bound then released; fine for a local bench). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

function statusField(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m?.[1] === undefined ? undefined : Number(m[1]) / 1024;
  } catch {
    return undefined;
  }
}

/** Peak resident memory (MB) since start or since the last resetPeakRss. */
export const peakRssMb = (pid: number): number | undefined => statusField(pid, 'VmHWM');
/** Current resident memory (MB). */
export const rssMb = (pid: number): number | undefined => statusField(pid, 'VmRSS');

/** Resets VmHWM to the current RSS (Linux clear_refs "5"), so each run reports its own peak. False when not possible. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
