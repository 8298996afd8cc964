/**
 * Candidate processes for the load benchmark: each one runs alone, pinned to a core when `taskset`
 * exists (proxy on core 0, load generator and backend on core 1), and its memory is read
 * from /proc/<pid>/status. Bench entry files (.ts) are transpiled once to plain .mjs so candidates
 * run without a TypeScript loader in their heap or on their CPU.
 * A health-checked process (Portico) writes its log to stdout as it does in production: into a
 * pipe that a separate process reads (see `startLogDrain`), never into /dev/null, which costs a
 * writer nothing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
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

/** Node arguments that run `portico start` (the build when current, see porticoCli) with `configFile` on 127.0.0.1:`port`. */
export function porticoStartArgs(configFile: string, port: number): string[] {
  return [...porticoCli(), 'start', '--config', configFile, '--host', '127.0.0.1', '--port', String(port)];
}

/**
 * How node runs Portico's CLI: the build (`dist/`), as users run it, brought up to date first
 * (`tsc -p tsconfig.build.json` is incremental: a second of work when nothing changed). A
 * file's time cannot tell a current build, since an incremental build leaves unchanged outputs
 * as they were. Under tsx instead, its loader would add work of its own per request (a name
 * given to every function made at run time: microseconds a request no user pays). `root` is
 * another checkout to run instead (a worktree of an older commit with its node_modules), built
 * with its own compiler.
 */
export function porticoCli(root: string = ROOT): string[] {
  if (!built.has(root)) {
    const tsc = resolve(root, 'node_modules/typescript/bin/tsc');
    const build = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
    if (build.status !== 0)
      throw new Error(`bench: the build of ${root} failed: Portico cannot be measured as users run it`);
    built.add(root);
  }
  return [resolve(root, 'dist/src/cli/main.js')];
}

/** The checkouts built in this run. */
const built = new Set<string>();

export interface Started {
  readonly name: string;
  readonly pid: number;
  readonly port: number;
  /** What went through the stdout pipe, known once the process has exited (drained stdout only). */
  readonly logged?: Promise<LogCount | undefined>;
  /** Last lines the process wrote on stderr (for failure reports). */
  stderrTail(): string;
  stop(): Promise<void>;
}

/** Lines and bytes a log drain read. */
export interface LogCount {
  readonly lines: number;
  readonly bytes: number;
}

export interface StartOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly core: number | undefined;
  readonly env?: NodeJS.ProcessEnv;
  /** How readiness is known: a `{"ready":true,"port":N}` stdout line, or 200 on a health URL. */
  readonly ready:
    { readonly kind: 'stdout-line' } | { readonly kind: 'health'; readonly port: number; readonly path: string };
  readonly timeoutMs?: number;
  /**
   * Stdout of a health-checked process: `drain` (default) is a pipe read by a separate process
   * pinned to `drainCore`, as a container runtime collects logs; `ignore` is /dev/null, for
   * processes whose output is not part of what is measured (the nginx backend).
   */
  readonly stdout?: 'drain' | 'ignore';
  readonly drainCore?: number | undefined;
}

/** Starts a process and resolves once it serves. */
export async function startProcess(o: StartOptions): Promise<Started> {
  const [command, args] = pinned(o.core, o.command, o.args);
  const drain = o.ready.kind === 'health' && o.stdout !== 'ignore' ? startLogDrain(o.drainCore) : undefined;
  let child: ChildProcess;
  try {
    child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, ...o.env },
      stdio: ['ignore', o.ready.kind === 'stdout-line' ? 'pipe' : (drain?.writeEnd ?? 'ignore'), 'pipe'],
    });
  } finally {
    // The child holds its own copy: the reader sees the end of the stream when the child exits.
    drain?.closeWriteEnd();
  }
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const timeoutMs = o.timeoutMs ?? 15_000;
  const port = await Promise.race([
    o.ready.kind === 'stdout-line' ? readyLine(child) : waitHealthy(o.ready.port, o.ready.path, timeoutMs),
    exited.then((code) =>
      Promise.reject(new Error(`${o.name} exited (code ${code}) before it was ready:\n${stderr.trim()}`)),
    ),
    new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`${o.name} not ready after ${timeoutMs} ms:\n${stderr.trim()}`)),
        timeoutMs,
      ).unref(),
    ),
  ]).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  return {
    name: o.name,
    pid: child.pid ?? -1,
    port,
    ...(drain === undefined ? {} : { logged: drain.counted }),
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

/** A pipe whose reader is its own process; the writer's end goes to the process under test. */
export interface LogDrain {
  /** The descriptor to give the writer as its stdout. */
  readonly writeEnd: number;
  /** Closes this process's copy of the write end (once the writer has its own). */
  closeWriteEnd(): void;
  /** What the reader read, once every writer has closed the pipe. */
  readonly counted: Promise<LogCount | undefined>;
}

/**
 * A named pipe (FIFO, as container runtimes hand a container its stdout) read by `wc -lc` pinned
 * to `core`: the reader costs what a log collector costs, on the load side, and its count says
 * how many lines the writer got out.
 */
export function startLogDrain(core: number | undefined): LogDrain {
  const dir = mkdtempSync(join(tmpdir(), 'portico-bench-log-'));
  const fifo = join(dir, 'stdout');
  try {
    const made = spawnSync('mkfifo', ['-m', '600', fifo]);
    if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr?.toString().trim() ?? made.error?.message}`);
    // Opening one end of a FIFO waits for the other; a read-write descriptor held meanwhile
    // (Linux allows it on a FIFO) lets both opens return at once.
    const both = openSync(fifo, constants.O_RDWR);
    const readEnd = openSync(fifo, constants.O_RDONLY);
    const writeEnd = openSync(fifo, constants.O_WRONLY);
    closeSync(both);
    const [command, args] = pinned(core, 'wc', ['-lc']);
    const reader = spawn(command, args, { stdio: [readEnd, 'pipe', 'ignore'] });
    closeSync(readEnd);
    let out = '';
    reader.stdout?.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const counted = new Promise<LogCount | undefined>((resolveCount) => {
      reader.once('error', () => resolveCount(undefined));
      reader.once('close', () => {
        const m = /(\d+)\s+(\d+)/.exec(out);
        resolveCount(m === null ? undefined : { lines: Number(m[1]), bytes: Number(m[2]) });
      });
    });
    return { writeEnd, closeWriteEnd: () => closeSync(writeEnd), counted };
  } finally {
    // Both ends are open where they are needed: the name is no longer.
    rmSync(dir, { recursive: true, force: true });
  }
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

const TICKS_PER_SEC = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** User + system CPU seconds of a process, all its threads (Linux /proc). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at index 2 of the split.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SEC;
}
