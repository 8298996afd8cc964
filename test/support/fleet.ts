/**
 * A small fleet, as teams run one: Debian's nginx in front of Portico replicas (real `portico start`
 * processes on fixed ports, so that a restarted replica comes back where nginx expects it), the
 * clients that load it (GET, POST, SSE, WebSocket, each counting what failed), and rolling
 * restarts. Used by test/integration/fleet-rolling-restart.test.ts and bench/fleet-restarts.ts.
 *
 * nginx runs in the foreground with its own prefix, configuration and logs in a temporary
 * directory; its upstream lists every replica with keep-alive connections to them and the default
 * `proxy_next_upstream` (error, timeout: an idempotent request is retried on the next replica, a
 * POST only when it was not sent).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { Agent, request } from 'undici';
import { WebSocket } from 'ws';
import { fileURLToPath } from 'node:url';
import { STARTUP_MS } from './cli-process.js';
import { freePort } from './redis.js';

export const NGINX = '/usr/sbin/nginx';
const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

export interface FleetNginx {
  readonly port: number;
  readonly url: string;
  /** nginx's error log so far (upstream failures are logged there). */
  errors(): string;
  stop(): Promise<void>;
}

export interface FleetNginxOptions {
  /** Idle keep-alive connections nginx keeps to the replicas (`keepalive`); 64 by default. */
  readonly keepalive?: number;
  /** Parameters of each `server` line (`max_fails=... fail_timeout=...`); nginx's defaults when empty. */
  readonly serverParams?: string;
}

/** nginx.conf: one worker, an upstream of `replicas` with keep-alive, streams unbuffered, upgrades passed. */
export function fleetNginxConf(
  dir: string,
  port: number,
  replicas: readonly number[],
  options: FleetNginxOptions = {},
): string {
  const params = options.serverParams === undefined || options.serverParams === '' ? '' : ` ${options.serverParams}`;
  return [
    'daemon off;',
    'worker_processes 1;',
    `pid ${join(dir, 'nginx.pid')};`,
    `error_log ${join(dir, 'error.log')} warn;`,
    'events { worker_connections 4096; }',
    'http {',
    '  access_log off;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${join(dir, t)};`),
    '  map $http_upgrade $connection_upgrade { default upgrade; "" ""; }',
    '  upstream portico {',
    ...replicas.map((p) => `    server 127.0.0.1:${p}${params};`),
    `    keepalive ${options.keepalive ?? 64};`,
    '  }',
    '  server {',
    `    listen 127.0.0.1:${port};`,
    '    location / {',
    '      proxy_pass http://portico;',
    '      proxy_http_version 1.1;',
    '      proxy_set_header Connection $connection_upgrade;',
    '      proxy_set_header Upgrade $http_upgrade;',
    '      proxy_set_header X-Forwarded-For $http_x_forwarded_for;',
    '      proxy_buffering off;',
    '      proxy_read_timeout 1h;',
    '    }',
    '  }',
    '}',
    '',
  ].join('\n');
}

/** Resolves once something accepts connections on 127.0.0.1:`port` (bounded). */
async function listening(port: number, child: ChildProcess, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nginx not listening on ${port} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Starts nginx in front of the replicas on `replicas` (ports). */
export async function startFleetNginx(
  replicas: readonly number[],
  options: FleetNginxOptions = {},
): Promise<FleetNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'portico-fleet-nginx-'));
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, fleetNginxConf(dir, port, replicas, options));
  const child = spawn(NGINX, ['-p', dir, '-e', join(dir, 'error.log'), '-c', conf], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await listening(port, child);
  } catch (err) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    errors: () => {
      try {
        return readFileSync(join(dir, 'error.log'), 'utf8');
      } catch {
        return '';
      }
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGQUIT');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One replica: `portico start --config FILE --port PORT`, restartable on the same port. */
export class Replica {
  private child: ChildProcess | undefined;
  private exited: Promise<number | string> = Promise.resolve(0);
  private stderr = '';
  constructor(
    readonly port: number,
    private readonly config: string,
    private readonly env: NodeJS.ProcessEnv = {},
    /** The CLI's entry (another checkout's, to compare); this checkout's by default. */
    private readonly cli = CLI,
  ) {}

  /** Starts the process; resolves once `/ready` answers 200 (warn-level logs keep the load's lines out). */
  async start(): Promise<void> {
    const args = ['--import', 'tsx', this.cli, 'start', '--config', this.config, '--host', '127.0.0.1'];
    const child = spawn(process.execPath, [...args, '--port', String(this.port)], {
      env: { ...process.env, PORTICO_LOG_LEVEL: process.env.FLEET_REPLICA_LOG_LEVEL ?? 'warn', ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = process.env.FLEET_REPLICA_LOG;
    if (log === undefined) child.stdout!.resume();
    else child.stdout!.pipe(createWriteStream(`${log}/${this.port}.log`, { flags: 'a' }));
    this.child = child;
    this.stderr = '';
    child.stderr!.on('data', (c: Buffer) => (this.stderr += c.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
    const deadline = Date.now() + STARTUP_MS;
    while (!(await ready(this.port))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`replica on ${this.port} did not start: ${this.stderr}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** Sends `signal` and resolves with the exit code once the process is gone. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | string> {
    const child = this.child;
    if (child === undefined) return 0;
    this.child = undefined;
    child.kill(signal);
    return this.exited;
  }

  kill(): void {
    this.child?.kill('SIGKILL');
  }
}

/** True when GET /ready on 127.0.0.1:`port` answers 200. */
function ready(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/ready', agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('error', () => resolve(false));
    req.end();
  });
}

/** What a set of clients saw. */
export interface Tally {
  ok: number;
  failed: number;
  /** The first few failures, for the assertion message. */
  readonly samples: string[];
}

const tally = (): Tally => ({ ok: 0, failed: 0, samples: [] });
const fail = (t: Tally, what: string) => {
  t.failed++;
  if (t.samples.length < 10) t.samples.push(what);
};

export interface Load {
  readonly get: Tally;
  readonly post: Tally;
  /** Stops the clients; resolves once their last requests are done. */
  stop(): Promise<void>;
}

/** `gets` and `posts` clients, each sending one request after another on keep-alive connections. */
export function startHttpLoad(url: string, gets: number, posts: number): Load {
  const agent = new Agent({ connections: gets + posts, keepAliveTimeout: 30_000 });
  const get = tally();
  const post = tally();
  let running = true;
  const loop = async (kind: 'GET' | 'POST', t: Tally, n: number) => {
    while (running) {
      try {
        const res = await request(`${url}${kind === 'GET' ? '/api/items' : '/api/orders'}`, {
          method: kind,
          dispatcher: agent,
          ...(kind === 'POST' ? { body: `{"n":${n}}`, headers: { 'content-type': 'application/json' } } : {}),
        });
        const body = await res.body.text();
        if (res.statusCode === 200) t.ok++;
        else fail(t, `${kind} ${res.statusCode} ${body.slice(0, 120)}`);
      } catch (err) {
        fail(t, `${kind} ${(err as Error).message}`);
      }
    }
  };
  const loops = [
    ...Array.from({ length: gets }, (_, i) => loop('GET', get, i)),
    ...Array.from({ length: posts }, (_, i) => loop('POST', post, i)),
  ];
  return {
    get,
    post,
    async stop() {
      running = false;
      await Promise.all(loops);
      await agent.close();
    },
  };
}

/** A long-lived client that reconnects whenever its stream ends; counts clean and broken ends. */
export interface StreamClient {
  /** Streams opened (the first and every reconnect). */
  opened: number;
  /** Ends the server asked for: an SSE body that ended, a WebSocket close frame (its codes). */
  readonly cleanEnds: number[];
  /** Ends without that: a reset, a WebSocket closed without a close frame (1006), a failed open. */
  readonly brokenEnds: string[];
  /** Attempts answered with an HTTP error (a draining replica refuses a new stream with 503), then retried. */
  readonly refused: number[];
  stop(): Promise<void>;
}

/** Runs `once` again and again (50 ms apart) until stopped: a client that reconnects. */
function reconnecting(once: () => Promise<void>, stop: () => void): () => Promise<void> {
  let running = true;
  const loop = (async () => {
    while (running) {
      await once();
      if (running) await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return async () => {
    running = false;
    stop();
    await loop;
  };
}

const streamCounts = () => ({
  opened: 0,
  cleanEnds: [] as number[],
  brokenEnds: [] as string[],
  refused: [] as number[],
});

/** An SSE client of `/api/events` that reconnects as EventSource does. */
export function startSseClient(url: string): StreamClient {
  const c = streamCounts();
  let stopping = false;
  let current: { destroy(): void } | undefined;
  const once = () =>
    new Promise<void>((resolve) => {
      const req = httpRequest(`${url}/api/events`, { agent: false }, (res) => {
        if (res.statusCode !== 200) {
          c.refused.push(res.statusCode ?? 0);
          res.resume();
          res.on('end', resolve);
          return;
        }
        c.opened++;
        res.resume();
        res.once('end', () => (stopping || c.cleanEnds.push(200), resolve()));
        res.once('aborted', () => (stopping || c.brokenEnds.push('aborted'), resolve()));
        res.once('error', () => resolve());
      });
      current = req;
      req.once('error', (err) => (stopping || c.brokenEnds.push(err.message), resolve()));
      req.end();
    });
  const stop = reconnecting(once, () => ((stopping = true), current?.destroy()));
  return Object.assign(c, { stop });
}

/** A WebSocket client of `/api/ws` that sends a message every 50 ms and reconnects when closed. */
export function startWsClient(wsUrl: string): StreamClient {
  const c = streamCounts();
  let stopping = false;
  let current: WebSocket | undefined;
  const once = () =>
    new Promise<void>((resolve) => {
      const ws = new WebSocket(`${wsUrl}/api/ws`);
      current = ws;
      let timer: NodeJS.Timeout | undefined;
      let refused = false;
      ws.once('open', () => {
        c.opened++;
        timer = setInterval(() => ws.send('ping'), 50);
      });
      ws.once('unexpected-response', (_req, res) => {
        refused = true;
        c.refused.push(res.statusCode ?? 0);
        ws.terminate();
      });
      ws.on('error', () => {});
      ws.once('close', (code) => {
        clearInterval(timer);
        if (!stopping && !refused) {
          if (code === 1006) c.brokenEnds.push('1006');
          else c.cleanEnds.push(code);
        }
        resolve();
      });
    });
  const stop = reconnecting(once, () => ((stopping = true), current?.terminate()));
  return Object.assign(c, { stop });
}

/**
 * Rolling restarts: SIGTERM one replica, start it again once it exited, then the next; `rounds`
 * restarts in all. Resolves with each stop's duration (SIGTERM to exit, ms).
 */
export async function rollingRestarts(replicas: readonly Replica[], rounds: number, pauseMs = 0): Promise<number[]> {
  const stops: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const replica = replicas[i % replicas.length]!;
    const started = performance.now();
    const code = await replica.stop('SIGTERM');
    stops.push(performance.now() - started);
    if (code !== 0) throw new Error(`replica on ${replica.port} exited with ${code}`);
    await replica.start();
    if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
  }
  return stops;
}
