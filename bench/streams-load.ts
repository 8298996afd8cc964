/**
 * Streaming load: what 1,000 idle SSE streams and 1,000 idle WebSocket tunnels cost one
 * gateway process, and what the gateway adds to a WebSocket echo round trip.
 *
 * The gateway runs alone in a child process (the current sources, compiled once to plain JS under
 * node_modules/.cache, so no TypeScript loader sits in its heap); its memory is read from
 * /proc/<pid>/status. This process holds the backends (an SSE server that sends one event and then
 * stays silent but for a comment every 15 s, and a `ws` echo server) and all the clients.
 *
 *   1. baseline RSS after one warm-up stream and tunnel
 *   2. open N SSE streams through the gateway (each has its first event), RSS
 *   3. keep them, open N WebSocket tunnels (each echoed one message), RSS
 *   4. with everything still open: echo round trips through the gateway and straight to the
 *      backend, interleaved one by one so both see the same machine load
 *
 * Run: node --import tsx bench/streams-load.ts [--sse 1000] [--ws 1000] [--trips 2000] [--tsx] [--save]
 *   --tsx   run the gateway from sources under tsx instead of compiling (faster start, bigger heap)
 *   --save  also write the report to bench/results/<date>-<commit>-streams.md
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type ClientRequest, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { WebSocket, WebSocketServer } from 'ws';
import {
  CACHE_DIR,
  ROOT,
  freePort,
  peakRssMb,
  resetPeakRss,
  rssMb,
  startProcess,
  type Started,
} from './lib/processes.js';
import { describeMachine, load1 } from './lib/machine.js';

const { values: args } = parseArgs({
  options: {
    sse: { type: 'string', default: '1000' },
    ws: { type: 'string', default: '1000' },
    trips: { type: 'string', default: '2000' },
    tsx: { type: 'boolean', default: false },
    save: { type: 'boolean', default: false },
  },
});
const SSE_COUNT = Number(args.sse);
const WS_COUNT = Number(args.ws);
const TRIPS = Number(args.trips);
/** Connections opened at once: a burst of 1,000 SYNs would overflow the listen backlog (511). */
const BATCH = 50;

// --- backends (in this process) -------------------------------------------------------------

function listen(server: Server): Promise<number> {
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r((server.address() as AddressInfo).port)));
}

const sseStreams = new Set<ServerResponse>();
const sseServer = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write('data: hello\n\n');
  sseStreams.add(res);
  res.on('close', () => sseStreams.delete(res));
});
// An idle stream still carries a heartbeat comment now and then, as real SSE servers do.
const heartbeat = setInterval(() => {
  for (const res of sseStreams) res.write(': keep-alive\n\n');
}, 15_000);

const wsServer = createServer();
const wss = new WebSocketServer({ server: wsServer, perMessageDeflate: false });
wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));

// --- gateway (child process) ----------------------------------------------------------------

/** Compiles the current sources to plain JS (type errors elsewhere in the tree do not stop emit). */
function compileGateway(): string {
  const out = resolve(CACHE_DIR, 'streams-dist');
  mkdirSync(out, { recursive: true });
  const tsc = resolve(ROOT, 'node_modules/typescript/bin/tsc');
  spawnSync(
    process.execPath,
    [
      tsc,
      '-p',
      resolve(ROOT, 'tsconfig.build.json'),
      '--outDir',
      out,
      '--tsBuildInfoFile',
      resolve(out, '.tsbuildinfo'),
    ],
    { cwd: ROOT, stdio: 'ignore' },
  );
  const main = resolve(out, 'src/cli/main.js');
  if (!existsSync(main)) throw new Error(`compiling the gateway produced no ${main}`);
  return main;
}

async function startGateway(ssePort: number, wsPort: number): Promise<Started> {
  const port = await freePort();
  const config = resolve(CACHE_DIR, 'streams-load.yaml');
  mkdirSync(CACHE_DIR, { recursive: true });
  writeFileSync(
    config,
    `routes:
  - method: GET
    route: /stream
    service: 127.0.0.1:${ssePort}
    path: /stream
    isSSE: true
  - method: GET
    route: /echo
    service: 127.0.0.1:${wsPort}
    path: /echo
    isWebSocket: true
config:
  host: 127.0.0.1
  port: ${port}
`,
  );
  const entry = args.tsx ? ['--import', 'tsx', resolve(ROOT, 'src/cli/main.ts')] : [compileGateway()];
  return startProcess({
    name: 'portico',
    command: process.execPath,
    args: [...entry, 'start', '--config', config],
    core: undefined,
    // One info line per upgrade and stream would measure the logger; warnings still show.
    env: { PORTICO_LOG_LEVEL: 'warn' },
    ready: { kind: 'health', port, path: '/health' },
  });
}

// --- clients ----------------------------------------------------------------------------------

/** Opens one SSE stream and resolves once its first event arrived. */
function openSse(port: number): Promise<ClientRequest> {
  return new Promise((resolveOpen, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path: '/api/stream', agent: false, headers: { accept: 'text/event-stream' } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`SSE status ${res.statusCode}`));
        res.once('data', () => resolveOpen(req));
        res.on('error', () => {});
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Opens one WebSocket and resolves once one message made the round trip. */
function openWs(url: string): Promise<WebSocket> {
  return new Promise((resolveOpen, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.once('open', () => ws.send('hi'));
    ws.once('message', () => resolveOpen(ws));
    ws.once('error', reject);
  });
}

async function openMany<T>(count: number, open: () => Promise<T>): Promise<T[]> {
  const all: T[] = [];
  for (let i = 0; i < count; i += BATCH)
    all.push(...(await Promise.all(Array.from({ length: Math.min(BATCH, count - i) }, open))));
  return all;
}

function roundTrip(ws: WebSocket, payload: string): Promise<number> {
  return new Promise((resolveTrip) => {
    const started = performance.now();
    ws.once('message', () => resolveTrip(performance.now() - started));
    ws.send(payload);
  });
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

function stats(samples: number[]): { mean: number; p50: number; p90: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    mean: samples.reduce((a, b) => a + b, 0) / samples.length,
    p50: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    p99: quantile(sorted, 0.99),
  };
}

const settle = () => new Promise((r) => setTimeout(r, 2_000));
const fdCount = (pid: number) => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
};
const mb = (n: number | undefined) => (n === undefined ? 'n/a' : `${n.toFixed(1)} MB`);
const ms = (n: number) => `${n.toFixed(3)} ms`;

// --- run --------------------------------------------------------------------------------------

const ssePort = await listen(sseServer);
const wsPort = await listen(wsServer);
const gateway = await startGateway(ssePort, wsPort);
const pid = gateway.pid;
const gwWs = `ws://127.0.0.1:${gateway.port}/api/echo`;
const directWs = `ws://127.0.0.1:${wsPort}/echo`;
const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};

try {
  const machine = describeMachine();
  say(
    `# Streaming load: ${SSE_COUNT} SSE streams, ${WS_COUNT} WebSocket tunnels (${machine.commit}${machine.dirty ? ', uncommitted changes' : ''})`,
  );
  say('');
  say(
    `- ${machine.nproc} CPUs, ${machine.cpuModel}; Node ${machine.node}; kernel ${machine.kernel}; 1-minute load average ${load1().toFixed(2)} at start`,
  );
  say(
    `- gateway: ${args.tsx ? 'sources under tsx' : 'current sources compiled to JS'}, log level warn, pid ${pid}; backends and clients in the bench process`,
  );
  say('');

  // Warm-up: load every code path once so the baseline includes the code, not only the heap.
  const warmSse = await openSse(gateway.port);
  const warmWs = await openWs(gwWs);
  warmSse.destroy();
  warmWs.close();
  await settle();
  resetPeakRss(pid);
  const baseline = rssMb(pid);

  let t = performance.now();
  const sse = await openMany(SSE_COUNT, () => openSse(gateway.port));
  const sseOpenMs = performance.now() - t;
  await settle();
  const withSse = rssMb(pid);
  const fdSse = fdCount(pid);

  t = performance.now();
  const tunnels = await openMany(WS_COUNT, () => openWs(gwWs));
  const wsOpenMs = performance.now() - t;
  await settle();
  const withBoth = rssMb(pid);
  const fdBoth = fdCount(pid);
  const peak = peakRssMb(pid);

  say('| gateway holds | RSS | added | per connection | open fds |');
  say('|---|---:|---:|---:|---:|');
  say(`| nothing (baseline, after warm-up) | ${mb(baseline)} | | | |`);
  if (baseline !== undefined && withSse !== undefined && withBoth !== undefined) {
    say(
      `| ${SSE_COUNT} SSE streams | ${mb(withSse)} | ${mb(withSse - baseline)} | ${(((withSse - baseline) * 1024) / SSE_COUNT).toFixed(1)} KB | ${fdSse} |`,
    );
    say(
      `| ${SSE_COUNT} SSE streams + ${WS_COUNT} WebSocket tunnels | ${mb(withBoth)} | ${mb(withBoth - withSse)} | ${(((withBoth - withSse) * 1024) / WS_COUNT).toFixed(1)} KB | ${fdBoth} |`,
    );
  }
  say('');
  say(
    `- peak RSS (VmHWM) during the run: ${mb(peak)}; opening took ${(sseOpenMs / 1000).toFixed(1)} s (SSE) and ${(wsOpenMs / 1000).toFixed(1)} s (WebSocket), ${BATCH} at a time`,
  );
  say('');

  // Echo latency with every stream and tunnel still open, gateway and direct interleaved.
  const viaGateway = await openWs(gwWs);
  const direct = await openWs(directWs);
  const payload = 'x'.repeat(64);
  for (let i = 0; i < 200; i++) {
    await roundTrip(viaGateway, payload);
    await roundTrip(direct, payload);
  }
  const gwSamples: number[] = [];
  const directSamples: number[] = [];
  for (let i = 0; i < TRIPS; i++) {
    gwSamples.push(await roundTrip(viaGateway, payload));
    directSamples.push(await roundTrip(direct, payload));
  }
  const g = stats(gwSamples);
  const d = stats(directSamples);
  say(
    `WebSocket echo round trip, 64-byte text message, ${TRIPS} trips each, interleaved, with all ${SSE_COUNT + WS_COUNT} connections open:`,
  );
  say('');
  say('| path | mean | p50 | p90 | p99 |');
  say('|---|---:|---:|---:|---:|');
  say(`| direct to the backend | ${ms(d.mean)} | ${ms(d.p50)} | ${ms(d.p90)} | ${ms(d.p99)} |`);
  say(`| through the gateway | ${ms(g.mean)} | ${ms(g.p50)} | ${ms(g.p90)} | ${ms(g.p99)} |`);
  say(
    `| added by the gateway | ${ms(g.mean - d.mean)} | ${ms(g.p50 - d.p50)} | ${ms(g.p90 - d.p90)} | ${ms(g.p99 - d.p99)} |`,
  );

  viaGateway.close();
  direct.close();
  for (const req of sse) req.destroy();
  for (const ws of tunnels) ws.terminate();
} finally {
  // Clients are gone first, so the gateway's drain has nothing to wait for.
  await new Promise((r) => setTimeout(r, 500));
  await gateway.stop();
  clearInterval(heartbeat);
  for (const ws of wss.clients) ws.terminate();
  wss.close();
  sseServer.closeAllConnections();
  sseServer.close();
  wsServer.close();
}

if (args.save) {
  const m = describeMachine();
  const file = resolve(ROOT, `bench/results/${new Date().toISOString().slice(0, 10)}-${m.commit}-streams.md`);
  writeFileSync(
    file,
    `${lines.join('\n')}\n\n- command: \`node --import tsx bench/streams-load.ts${process.argv.slice(2).length ? ' ' + process.argv.slice(2).join(' ') : ''}\`\n`,
  );
  process.stdout.write(`\nsaved ${file}\n`);
}
