/**
 * A real `redis-server` on 127.0.0.1 and an ephemeral port, without persistence, for tests of the
 * shared state. Ready once its log says so (no sleeps); `stop()` ends it by PID, `start()` brings a
 * new one up on the same port (a restarted Redis, empty, like one that lost its data), `freeze()`
 * stalls it without closing a connection.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';

export interface TestRedis {
  readonly port: number;
  /** `redis://127.0.0.1:PORT`, with the password when one was given. */
  readonly url: string;
  /** The running server's PID, undefined while stopped. */
  readonly pid: number | undefined;
  /** Starts the server (again) on the same port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Kills the server by PID (SIGKILL: like a crash, no goodbye to clients); resolves once it exited. */
  stop(): Promise<void>;
  /** Suspends the server (SIGSTOP): connections stay open and nothing answers, like a stalled Redis. */
  freeze(): void;
  /** Resumes a frozen server (SIGCONT). */
  thaw(): void;
}

/** A free port on 127.0.0.1, found by binding port 0. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject()));
    });
  });
}

/** Starts `redis-server`; `password` sets `requirepass`. */
export async function startRedis(options: { password?: string } = {}): Promise<TestRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  if (options.password !== undefined) args.push('--requirepass', options.password);

  const start = () =>
    new Promise<void>((resolve, reject) => {
      const proc = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child = proc;
      let log = '';
      const lines = createInterface({ input: proc.stdout! });
      lines.on('line', (line) => {
        log += line + '\n';
        if (line.includes('Ready to accept connections')) {
          lines.close();
          proc.stdout!.resume();
          resolve();
        }
      });
      proc.stderr!.on('data', (c: Buffer) => (log += c.toString()));
      proc.once('error', reject);
      proc.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${log}`)));
    });

  const stop = async () => {
    const proc = child;
    child = undefined;
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    process.kill(proc.pid!, 'SIGKILL');
    await exited;
  };

  await start();
  const auth = options.password === undefined ? '' : `:${encodeURIComponent(options.password)}@`;
  return {
    port,
    url: `redis://${auth}127.0.0.1:${port}`,
    get pid() {
      return child?.pid;
    },
    start,
    stop,
    freeze: () => void (child?.pid !== undefined && process.kill(child.pid, 'SIGSTOP')),
    thaw: () => void (child?.pid !== undefined && process.kill(child.pid, 'SIGCONT')),
  };
}
