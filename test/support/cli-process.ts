/**
 * `portico start` as a child process, the way a user runs it. Resolves once the gateway logs that
 * it listens, with the port it chose (`--port 0`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const cli = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
/**
 * How long the gateway may take to log that it listens: compiling through tsx is slow on a loaded
 * machine, and the bound only guards against a gateway that never listens.
 */
export const STARTUP_MS = 30_000;

export interface PorticoProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly url: string;
  /** Parsed JSON log lines so far. */
  readonly logs: Record<string, unknown>[];
  /** Resolves with the exit code (or signal name). */
  readonly exited: Promise<number | string>;
  /** Resolves with the first log line matching `test`. */
  waitForLog(test: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
}

export function startPortico(args: string[], env: NodeJS.ProcessEnv = {}): Promise<PorticoProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', cli, 'start', '--host', '127.0.0.1', '--port', '0', ...args],
    {
      env: { ...process.env, PORTICO_LOG_LEVEL: 'debug', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const logs: Record<string, unknown>[] = [];
  const waiters: { test: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] =
    [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    logs.push(parsed);
    for (const w of [...waiters]) {
      if (w.test(parsed)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(parsed);
      }
    }
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const waitForLog = (test: (l: Record<string, unknown>) => boolean, timeoutMs = 10_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const found = logs.find(test);
      if (found) return resolve(found);
      const timer = setTimeout(
        () => reject(new Error(`log line not seen within ${timeoutMs} ms; stderr: ${stderr}`)),
        timeoutMs,
      );
      waiters.push({ test, resolve: (l) => (clearTimeout(timer), resolve(l)) });
      void exited.then((code) => reject(new Error(`portico exited (${code}) before the log line; stderr: ${stderr}`)));
    });
  return waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('portico listening'), STARTUP_MS).then(
    (l) => {
      const port = Number(l.port);
      return { child, port, url: `http://127.0.0.1:${port}`, logs, exited, waitForLog };
    },
    (err: unknown) => {
      // The caller gets no handle to stop it: a child left running would keep the test file alive.
      child.kill('SIGKILL');
      throw err;
    },
  );
}
