/**
 * Scale in connections (docs/performance.md "Scale in connections"): what N idle keep-alive clients and N open WebSocket
 * tunnels cost Portico, the Node floor (bench/node-floor.ts, `--ws` for its tunnels) and nginx
 * (one worker) as proxies, and what they do to the latency of other clients meanwhile.
 *
 *   node --import tsx bench/connections.ts [--connections 10000] [--quick] [--seconds 10]
 *        [--rate 200] [--candidates portico,floor,nginx] [--no-pin] [--out FILE]
 *
 * For each candidate, two phases, each on a fresh proxy process (freed memory is not handed back
 * at once, so a phase after another would reuse the first one's pages and look cheaper):
 * 1. idle keep-alive clients: warm-up (100 connections opened and closed, a second of load),
 *    then memory, an open-loop load (bench/open-loop-client.ts, `--rate` requests/s for
 *    `--seconds`, its own process) for the p99 without the idle clients, N connections opened
 *    100 at a time, each making one GET first so that it is a real client, then memory again
 *    and the same load for the p99 with them open;
 * 2. WebSocket tunnels: the same with N tunnels to a `ws` echo backend (bench/ws-echo-backend.ts,
 *    a process of its own), each upgraded through the proxy and echoed one message.
 * Memory: RSS from /proc after a full collection (Node processes get `--expose-gc` and
 * bench/lib/heap-probe.ts, which also reports the V8 heap), per connection = delta / N; nginx's
 * is its worker's RSS. "accept" is the time to open the N (connect, request, answer), 100 in
 * flight. The clients are held by this process, so the proxy's descriptors are its own; the
 * proxies run on core 0 when `taskset` exists, the backends and the load on core 1. Descriptor
 * limits are raised with `prlimit` (a tunnel is two descriptors in the proxy); each candidate's
 * tunnels reach the backend at an address of their own (127.0.0.11, .12, ...) so that the
 * TIME_WAIT ports of one candidate's backend connections never run short for the next.
 * `--quick` is 1,000 connections and 3-second loads: a check that it works, not a measurement.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
import { describeDescriptors, descriptorLimit } from './lib/descriptors.js';
import { describeMachine, load1 } from './lib/machine.js';
import { findNginx, nginxVersion, startNginxBackend } from './lib/nginx.js';
import { runOpenLoop, type OpenLoopResult } from './lib/open-loop.js';
import {
  CACHE_DIR,
  ROOT,
  detectPinning,
  freePort,
  rssMb,
  startProcess,
  transpileEntry,
  type Pinning,
  type Started,
} from './lib/processes.js';
import { emitResults, runBench } from './lib/report.js';
import { BUILT_IN_SCENARIOS } from './lib/scenarios.js';

type CandidateId = 'portico' | 'floor' | 'nginx';
type Phase = 'idle' | 'tunnels';
const LABELS: Record<CandidateId, string> = {
  portico: 'Portico',
  floor: 'Node floor (bench/node-floor.ts)',
  nginx: 'nginx (1 worker)',
};
/** Connections opened at once: a burst of thousands of SYNs would overflow the listen backlog. */
const BATCH = 100;
const WARM_UP = 100;

interface Memory {
  readonly rssMb: number;
  /** V8 heap in use after a full collection; undefined for nginx. */
  readonly heapMb: number | undefined;
}

/** A proxy process under measurement. */
interface Proxy {
  readonly port: number;
  /** Its process (nginx: the worker), for the descriptor report when connections fail. */
  readonly pid: number;
  memory(): Promise<Memory>;
  stop(): Promise<void>;
}

interface PhaseResult {
  readonly before: Memory;
  readonly after: Memory;
  readonly acceptMs: number;
  /** Connections opened and held (the phase's N). */
  readonly opened: number;
  /** Connections the proxy closed while they were held. */
  readonly lost: number;
  readonly quiet: OpenLoopResult;
  readonly loaded: OpenLoopResult;
}

interface Run {
  /** Idle keep-alive connections to open. */
  readonly n: number;
  /** Tunnels to open: N, or fewer when a proxy process cannot hold 2 N descriptors (see main). */
  readonly tunnels: number;
  readonly seconds: number;
  readonly rate: number;
  readonly pinning: Pinning | undefined;
  readonly dir: string;
  readonly backendPort: number;
  readonly nginx: string | undefined;
  /** Portico's CLI compiled from the current sources (compileGateway). */
  readonly porticoMain: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// --- memory ------------------------------------------------------------------------------------

/** Asks a process preloaded with bench/lib/heap-probe.ts for its memory after a full collection. */
async function probedMemory(pid: number, file: string): Promise<Memory> {
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; waited < 10_000; waited += 50) {
    if (existsSync(file)) {
      const m = JSON.parse(readFileSync(file, 'utf8')) as { heapUsed: number; collected: boolean };
      if (!m.collected) throw new Error('the heap probe ran without --expose-gc');
      return { rssMb: rssMb(pid) ?? NaN, heapMb: m.heapUsed / 2 ** 20 };
    }
    await sleep(50);
  }
  throw new Error(`no memory report from pid ${pid} within 10 s`);
}

let probeEntry: string | undefined;
/** Node flags that make a process answer `probedMemory`. */
function probeFlags(): string[] {
  probeEntry ??= transpileEntry(resolve(ROOT, 'bench/lib/heap-probe.ts'));
  return ['--expose-gc', '--import', pathToFileURL(probeEntry).href];
}

function nodeProxy(started: Started, port: number, heapFile: string): Proxy {
  return { port, pid: started.pid, memory: () => probedMemory(started.pid, heapFile), stop: () => started.stop() };
}

/**
 * Compiles the current sources to plain JS with tsc, into a directory of this checkout's own
 * (worktrees share node_modules/.cache). Not tsx: its keepNames gives every closure a `name`
 * property stored out of object, 256 bytes more for each closure a connection keeps, which the
 * built package does not have. Not dist/: it may be older than the sources.
 */
function compileGateway(): string {
  const out = resolve(CACHE_DIR, `connections-dist-${createHash('sha1').update(ROOT).digest('hex').slice(0, 8)}`);
  mkdirSync(out, { recursive: true });
  const tsc = resolve(ROOT, 'node_modules/typescript/bin/tsc');
  const args = ['-p', resolve(ROOT, 'tsconfig.build.json'), '--outDir', out, '--declaration', 'false'];
  spawnSync(process.execPath, [tsc, ...args, '--tsBuildInfoFile', resolve(out, '.tsbuildinfo')], {
    cwd: ROOT,
    stdio: 'ignore',
  });
  const main = resolve(out, 'src/cli/main.js');
  if (!existsSync(main)) throw new Error(`compiling the gateway produced no ${main}`);
  return main;
}

// --- candidates --------------------------------------------------------------------------------

async function startPortico(run: Run, wsTarget: string): Promise<Proxy> {
  const port = await freePort();
  const file = join(run.dir, 'portico.yaml');
  // The rate limit (on by default, by client address) would refuse thousands of clients that all
  // come from 127.0.0.1.
  writeFileSync(
    file,
    `config:
  rateLimit: { enabled: false }
routes:
  - { method: GET, route: /small, service: "127.0.0.1:${run.backendPort}", path: /small }
  - { method: GET, route: /echo, service: "${wsTarget}", path: /echo, isWebSocket: true }
`,
  );
  const heapFile = join(run.dir, 'portico-heap.json');
  const started = await startProcess({
    name: 'portico',
    command: process.execPath,
    args: [...probeFlags(), run.porticoMain, 'start', '--config', file, '--host', '127.0.0.1', '--port', String(port)],
    core: run.pinning?.proxyCore,
    drainCore: run.pinning?.loadCore,
    env: { PORTICO_BENCH_HEAP_FILE: heapFile },
    ready: { kind: 'health', port, path: '/health' },
    timeoutMs: 60_000,
  });
  return nodeProxy(started, port, heapFile);
}

async function startFloor(run: Run, wsTarget: string): Promise<Proxy> {
  const heapFile = join(run.dir, 'floor-heap.json');
  const started = await startProcess({
    name: 'node floor',
    command: process.execPath,
    args: [
      ...probeFlags(),
      transpileEntry(resolve(ROOT, 'bench/node-floor.ts')),
      `http://127.0.0.1:${run.backendPort}`,
      String(await freePort()),
      '--ws',
      `http://${wsTarget}`,
    ],
    core: run.pinning?.proxyCore,
    env: { PORTICO_BENCH_HEAP_FILE: heapFile },
    ready: { kind: 'stdout-line' },
  });
  return nodeProxy(started, started.port, heapFile);
}

async function startNginxProxy(run: Run, wsTarget: string): Promise<Proxy> {
  const port = await freePort();
  const conf = join(run.dir, 'nginx-proxy.conf');
  // Every tunnel is two connections; the worker gets the descriptors for them (at most the hard
  // limit it inherits: nginx warns and keeps that one when it cannot raise it).
  const connections = 2 * Math.max(run.n, run.tunnels) + 2048;
  writeFileSync(
    conf,
    [
      'daemon off;',
      'worker_processes 1;',
      `worker_rlimit_nofile ${connections + 1024};`,
      `pid ${join(run.dir, 'nginx-proxy.pid')};`,
      `error_log ${join(run.dir, 'nginx-proxy.log')} warn;`,
      `events { worker_connections ${connections}; }`,
      'http {',
      '  access_log off;',
      '  keepalive_timeout 120s;',
      '  keepalive_requests 100000000;',
      '  tcp_nodelay on;',
      `  client_body_temp_path ${join(run.dir, 'body')};`,
      `  proxy_temp_path ${join(run.dir, 'proxy')};`,
      `  fastcgi_temp_path ${join(run.dir, 'fastcgi')};`,
      `  uwsgi_temp_path ${join(run.dir, 'uwsgi')};`,
      `  scgi_temp_path ${join(run.dir, 'scgi')};`,
      `  upstream backend { server 127.0.0.1:${run.backendPort}; keepalive 64; }`,
      `  server { listen 127.0.0.1:${port} backlog=4096;`,
      '    location = /api/echo {',
      `      proxy_pass http://${wsTarget}/echo;`,
      '      proxy_http_version 1.1;',
      '      proxy_set_header Upgrade $http_upgrade;',
      '      proxy_set_header Connection "upgrade";',
      // nginx closes a tunnel silent for proxy_read_timeout (60 s by default); Portico and the
      // floor keep idle tunnels open.
      '      proxy_read_timeout 3600s;',
      '      proxy_send_timeout 3600s;',
      '    }',
      '    location /api/ {',
      '      proxy_pass http://backend/;',
      '      proxy_http_version 1.1;',
      '      proxy_set_header Connection "";',
      '    }',
      '    location = /health { return 200 "ok"; }',
      '  }',
      '}',
      '',
    ].join('\n'),
  );
  const started = await startProcess({
    name: 'nginx proxy',
    command: run.nginx!,
    args: ['-p', run.dir, '-e', join(run.dir, 'nginx-proxy.log'), '-c', conf],
    core: run.pinning?.proxyCore,
    ready: { kind: 'health', port, path: '/health' },
    stdout: 'ignore',
  });
  const worker = Number(
    spawnSync('pgrep', ['-P', String(started.pid)], { encoding: 'utf8' })
      .stdout.trim()
      .split('\n')[0],
  );
  return {
    port,
    pid: worker,
    memory: async () => ({ rssMb: rssMb(worker) ?? NaN, heapMb: undefined }),
    stop: () => started.stop(),
  };
}

const STARTERS: Record<CandidateId, (run: Run, wsTarget: string) => Promise<Proxy>> = {
  portico: startPortico,
  floor: startFloor,
  nginx: startNginxProxy,
};

// --- clients -----------------------------------------------------------------------------------

/** Held connections, and how many of them the proxy closed meanwhile. */
interface Held {
  readonly close: () => void;
  readonly lost: () => number;
}

/** A keep-alive connection that made one GET and read its whole answer. */
function openIdle(port: number, onLost: () => void): Promise<Socket> {
  return new Promise((resolveOpen, reject) => {
    const socket = connect(port, '127.0.0.1');
    let seen = Buffer.alloc(0);
    let done = false;
    socket.once('connect', () => socket.write('GET /api/small HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const end = seen.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = seen.subarray(0, end).toString('latin1');
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      const complete =
        length === null ? seen.subarray(end).includes('\r\n0\r\n\r\n') : seen.length - end - 4 >= Number(length[1]);
      if (!complete) return;
      socket.off('data', onData);
      if (!head.startsWith('HTTP/1.1 200')) return reject(new Error(`idle client got ${head.split('\r\n')[0]}`));
      done = true;
      resolveOpen(socket);
    };
    socket.on('data', onData);
    socket.on('error', (err) => {
      if (!done) reject(err);
    });
    socket.once('close', () => {
      if (done) onLost();
      else reject(new Error('closed before its answer'));
    });
  });
}

/** A WebSocket through the proxy that has echoed one message. */
function openTunnel(url: string, onLost: () => void): Promise<WebSocket> {
  return new Promise((resolveOpen, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    let done = false;
    ws.once('open', () => ws.send('hi'));
    ws.once('message', () => {
      done = true;
      resolveOpen(ws);
    });
    ws.on('error', (err) => {
      if (!done) reject(err);
    });
    ws.once('close', () => {
      if (done) onLost();
    });
  });
}

type Client = { destroy?(): void; terminate?(): void };
const closeClient = (c: Client) => (c.terminate ?? c.destroy)!.call(c);

/**
 * Opens `n` with `open`, BATCH at a time; resolves with the time it took. When one fails, the
 * error names every process's descriptors (`describe`), read while the others are still held:
 * a proxy out of descriptors resets connections (see bench/lib/descriptors.ts), and the reset
 * alone does not say which process ran out.
 */
async function openMany(n: number, open: (onLost: () => void) => Promise<Client>, describe: () => string) {
  let lost = 0;
  const all: Client[] = [];
  const started = performance.now();
  for (let i = 0; i < n; i += BATCH) {
    const batch = await Promise.allSettled(Array.from({ length: Math.min(BATCH, n - i) }, () => open(() => lost++)));
    for (const r of batch) if (r.status === 'fulfilled') all.push(r.value);
    const failed = batch.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed === undefined) continue;
    const report = describe();
    for (const c of all) closeClient(c);
    const why = failed.reason instanceof Error ? failed.reason.message : String(failed.reason);
    throw new Error(`a connection failed with ${all.length} of ${n} open (${why}); descriptors then:\n${report}`);
  }
  const ms = performance.now() - started;
  const held: Held = {
    close: () => {
      for (const c of all) closeClient(c);
    },
    lost: () => lost,
  };
  return { held, ms };
}

// --- phases ------------------------------------------------------------------------------------

function load(run: Run, proxy: Proxy, seconds: number): Promise<OpenLoopResult> {
  return runOpenLoop({
    url: `http://127.0.0.1:${proxy.port}/api/small`,
    method: 'GET',
    headers: {},
    rate: run.rate,
    durationSec: seconds,
    connections: 16,
    core: run.pinning?.loadCore,
  });
}

/** A candidate's ws echo backend: its `host:port`, and its process. */
interface WsBackend {
  readonly target: string;
  readonly pid: number;
}

async function measure(run: Run, id: CandidateId, phase: Phase, ws: WsBackend): Promise<PhaseResult> {
  const proxy = await STARTERS[id](run, ws.target);
  const n = phase === 'idle' ? run.n : run.tunnels;
  const describe = () =>
    describeDescriptors(
      [
        { name: `${id} proxy`, pid: proxy.pid },
        { name: 'ws echo backend', pid: ws.pid },
        { name: 'bench (the clients)', pid: process.pid },
        // A failed batch may have closed up to two descriptors a connection before this runs.
      ],
      2 * BATCH + 16,
    );
  try {
    const wsUrl = `ws://127.0.0.1:${proxy.port}/api/echo`;
    const open = (count: number) =>
      phase === 'idle'
        ? openMany(count, (lost) => openIdle(proxy.port, lost), describe)
        : openMany(count, (lost) => openTunnel(wsUrl, lost), describe);
    // Warm-up: every code path the phase takes has run, so the baseline holds the code.
    const warm = await open(WARM_UP);
    await load(run, proxy, 1);
    warm.held.close();
    await sleep(1_000);
    const before = await proxy.memory();
    const quiet = await load(run, proxy, run.seconds);
    const { held, ms } = await open(n).catch((err: Error) => {
      throw new Error(`${id} ${phase}: ${err.message}`);
    });
    await sleep(1_000);
    const after = await proxy.memory();
    const loaded = await load(run, proxy, run.seconds);
    const lost = held.lost();
    held.close();
    process.stderr.write(
      `${id} ${phase}: ${n} in ${Math.round(ms)} ms, RSS ${before.rssMb.toFixed(1)} -> ${after.rssMb.toFixed(1)} MB, p99 ${quiet.p99Ms} -> ${loaded.p99Ms} ms\n`,
    );
    return { before, after, acceptMs: ms, opened: n, lost, quiet, loaded };
  } finally {
    await proxy.stop();
  }
}

// --- report ------------------------------------------------------------------------------------

const kb = (deltaMb: number, n: number) => ((deltaMb * 1024) / n).toFixed(1);

function table(phase: Phase, results: ReadonlyMap<CandidateId, PhaseResult>, n: number): string[] {
  // Every candidate opens the same N in a phase (main sizes it to the descriptor limit).
  const what = phase === 'idle' ? 'idle keep-alive connection' : 'open tunnel';
  const floor = results.get('floor');
  const perRss = (r: PhaseResult) => ((r.after.rssMb - r.before.rssMb) * 1024) / n;
  const lines = [
    `| candidate | RSS before MB | RSS with ${n} MB | RSS KB per ${what} | vs floor | heap KB per ${what} | heap vs floor | accept ms (${n}, ${BATCH} at a time) | others' p99 ms without | with | ratio | lost |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [id, r] of results) {
    const heap =
      r.before.heapMb === undefined || r.after.heapMb === undefined ? '-' : kb(r.after.heapMb - r.before.heapMb, n);
    const vs = floor === undefined ? '-' : `${(perRss(r) / perRss(floor)).toFixed(2)}x`;
    const heapDelta = (x: PhaseResult) => (x.after.heapMb ?? NaN) - (x.before.heapMb ?? NaN);
    const heapVs =
      floor === undefined || r.before.heapMb === undefined ? '-' : `${(heapDelta(r) / heapDelta(floor)).toFixed(2)}x`;
    lines.push(
      `| ${LABELS[id]} | ${r.before.rssMb.toFixed(1)} | ${r.after.rssMb.toFixed(1)} | ${kb(r.after.rssMb - r.before.rssMb, n)} | ${vs} | ${heap} | ${heapVs} | ${Math.round(r.acceptMs)} | ${r.quiet.p99Ms.toFixed(2)} | ${r.loaded.p99Ms.toFixed(2)} | ${(r.loaded.p99Ms / r.quiet.p99Ms).toFixed(2)}x | ${r.lost} |`,
    );
  }
  return lines;
}

/** Sets this process's descriptor limit (children inherit it); false when it cannot. */
function setFdLimit(wanted: number): boolean {
  const r = spawnSync('prlimit', ['--pid', String(process.pid), `--nofile=${wanted}:${wanted}`], { stdio: 'ignore' });
  return r.status === 0;
}

/**
 * Descriptors a process needs beyond its connections: stdio, the listeners, epoll, libuv's
 * reserve, the proxy's backend pool and the load generator's 16 connections, with room to spare.
 */
const FD_RESERVE = 100;

/**
 * How many connections each phase can open under a descriptor limit of `limit` for every
 * process: an idle client is one descriptor in the proxy and one in this process; a tunnel is
 * two in the proxy (client and backend), one in the ws backend and one here. So one proxy
 * process holds at most (limit - reserve) / 2 tunnels: 9,950 under 20,000.
 */
function phaseSizes(wanted: number, limit: number): { idle: number; tunnels: number } {
  return {
    idle: Math.min(wanted, limit - FD_RESERVE),
    tunnels: Math.min(wanted, Math.floor((limit - FD_RESERVE) / 2 / BATCH) * BATCH),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      connections: { type: 'string', default: '10000' },
      quick: { type: 'boolean', default: false },
      seconds: { type: 'string' },
      rate: { type: 'string', default: '200' },
      candidates: { type: 'string', default: 'portico,floor,nginx' },
      'no-pin': { type: 'boolean', default: false },
      out: { type: 'string' },
      // Lowers every process's descriptor limit: checks at small N what a run at the
      // machine's limit does (`--connections 1000 --fd-limit 1500`: 700 tunnels).
      'fd-limit': { type: 'string' },
    },
  });
  const n = values.quick ? 1000 : Number(values.connections);
  const seconds = Number(values.seconds ?? (values.quick ? 3 : 10));
  const rate = Number(values.rate);
  const ids = values.candidates.split(',').map((s) => s.trim()) as CandidateId[];
  for (const id of ids) if (!(id in STARTERS)) throw new Error(`unknown candidate ${id} (portico, floor, nginx)`);
  const nginx = findNginx();
  if (nginx === undefined) throw new Error('nginx is needed (apt-get install -y nginx): backend and reference proxy');
  // A tunnel is two descriptors in the proxy: ask for room for N of them. When the hard limit
  // stands in the way (prlimit refused), the tunnel phase opens what one proxy holds.
  const wantedLimit = values['fd-limit'] === undefined ? 4 * n + 4096 : Number(values['fd-limit']);
  const raised = setFdLimit(wantedLimit);
  const fdLimit = descriptorLimit(process.pid) ?? wantedLimit;
  const sizes = phaseSizes(n, fdLimit);
  if (sizes.idle < n || sizes.tunnels < n)
    process.stderr.write(
      `descriptor limit ${fdLimit}: ${sizes.idle} idle connections and ${sizes.tunnels} tunnels instead of ${n}\n`,
    );
  const pinning = detectPinning(!values['no-pin']);
  const dir = mkdtempSync(join(tmpdir(), 'portico-bench-connections-'));
  const m = describeMachine();
  const started: Started[] = [];
  const results: Record<Phase, Map<CandidateId, PhaseResult>> = { idle: new Map(), tunnels: new Map() };
  const startLoad = load1();
  try {
    const small = BUILT_IN_SCENARIOS.find((s) => s.id === 'small')!;
    const backend = await startNginxBackend(nginx, [small], pinning?.loadCore);
    started.push(backend);
    const wsEntry = transpileEntry(resolve(ROOT, 'bench/ws-echo-backend.ts'));
    const porticoMain = ids.includes('portico') ? compileGateway() : '';
    const run: Run = {
      n: sizes.idle,
      tunnels: sizes.tunnels,
      seconds,
      rate,
      pinning,
      dir,
      backendPort: backend.port,
      nginx,
      porticoMain,
    };
    for (const [k, id] of ids.entries()) {
      // A backend of its own per candidate, at an address of its own (see the header).
      const address = `127.0.0.${11 + k}`;
      const ws = await startProcess({
        name: 'ws echo backend',
        command: process.execPath,
        args: [wsEntry, '0', address],
        core: pinning?.loadCore,
        ready: { kind: 'stdout-line' },
      });
      started.push(ws);
      const backend = { target: `${address}:${ws.port}`, pid: ws.pid };
      for (const phase of ['idle', 'tunnels'] as const) results[phase].set(id, await measure(run, id, phase, backend));
      await ws.stop();
    }
  } finally {
    for (const s of started.reverse()) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const lines = [
    `# Scale in connections (${new Date().toISOString().slice(0, 10)}, ${m.commit}${m.dirty ? ', uncommitted changes' : ''})`,
    '',
    `Machine: ${m.cpuModel}, ${m.nproc} CPUs, kernel ${m.kernel}; Node ${m.node}; ${nginxVersion(nginx)} (backend and reference proxy, one worker each); 1-minute load average ${startLoad.toFixed(2)} at the start.`,
    `Command: \`node --import tsx bench/connections.ts ${process.argv.slice(2).join(' ')}\`. Portico: the current sources compiled by tsc.`,
    `${pinning ? `Proxies on core ${pinning.proxyCore}; backends, Portico's log drain and the load on core ${pinning.loadCore}; clients held by the bench process` : 'no CPU pinning'}. Descriptor limit ${fdLimit} for every process${raised ? '' : ` (prlimit refused ${wantedLimit})`}${sizes.tunnels < n ? `: a tunnel is two descriptors in the proxy, so one proxy process holds at most ${sizes.tunnels} tunnels, and the tunnel phase opened ${sizes.tunnels}, not ${n}` : ''}${sizes.idle < n ? `; the idle phase opened ${sizes.idle}` : ''}.`,
    `Others' p99: an open-loop GET /api/small at ${rate} requests/s for ${seconds} s (latency from each request's due time), before the N were opened and while they are held. Memory after a full collection (Node) and 1 s of rest; per connection = delta / N.`,
    '',
    `## ${sizes.idle} idle keep-alive clients (each made one GET first)`,
    '',
    ...table('idle', results.idle, sizes.idle),
    '',
    `## ${sizes.tunnels} open WebSocket tunnels (each echoed one message)`,
    '',
    ...table('tunnels', results.tunnels, sizes.tunnels),
    '',
    'Goals (docs/performance.md "Scale in connections"): Portico\'s memory per idle connection and per idle tunnel <= 1.2x the Node floor\'s ("vs floor" by RSS, "heap vs floor" by V8 heap), others\' p99 with them open within 1.10x of without ("ratio").',
    '',
  ];
  emitResults(lines.join('\n'), values.out);
}

runBench(main);
