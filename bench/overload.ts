/**
 * Overload (docs/overload.md): what admitted requests see when twice the load the gateway can
 * serve is offered, with and without admission control.
 *
 *   node --import tsx bench/overload.ts [--seconds 10] [--concurrency 16] [--service-ms 20] [--out FILE]
 *
 * The backend serves `--concurrency` requests at a time, each in `--service-ms`, and queues the
 * rest: the route's capacity is known, concurrency / service time. Portico runs in a process of
 * its own (pinned to core 0 when `taskset` exists, log level `warn`); the backend and the load
 * generator share this process, on the load core.
 *
 * Rows, each from one run of `--seconds`:
 * - at capacity: `--concurrency` closed-loop clients (each sends its next request when answered),
 *   the capacity measured and the p99 of its answers;
 * - twice the measured capacity, open loop (a constant rate, each latency measured from the
 *   moment its request was due, so that a slow answer delays no later measurement), without
 *   admission control: the backend's queue grows, and every request waits in it;
 * - the same load with `admission: { maxInFlight: concurrency }` on the route.
 * Goal: the admitted requests' p99 within 2x the p99 at capacity; refusals fast.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { CACHE_DIR, detectPinning, freePort, porticoStartArgs, startProcess } from './lib/processes.js';
import { describeMachine, load1 } from './lib/machine.js';
import { emitResults, percentile, runBench } from './lib/report.js';

interface Sample {
  readonly status: number;
  readonly ms: number;
}

interface Row {
  readonly label: string;
  readonly offered: string;
  readonly samples: readonly Sample[];
  readonly seconds: number;
}

/** A backend that serves `concurrency` requests at once, each in `serviceMs`, and queues the rest. */
async function startQueueingBackend(concurrency: number, serviceMs: number) {
  let busy = 0;
  const queue: ServerResponse[] = [];
  const serve = (res: ServerResponse): void => {
    busy++;
    setTimeout(() => {
      res.end('{"ok":true}');
      busy--;
      const next = queue.shift();
      if (next !== undefined) serve(next);
    }, serviceMs);
  };
  const server = createServer((req, res) => {
    req.resume();
    res.setHeader('content-type', 'application/json');
    if (busy < concurrency) serve(res);
    else queue.push(res);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

async function send(agent: Agent, url: string): Promise<number> {
  try {
    const res = await request(url, { dispatcher: agent });
    await res.body.dump();
    return res.statusCode;
  } catch {
    return 0;
  }
}

/** `clients` closed-loop clients for `seconds`. */
async function closedLoop(agent: Agent, url: string, clients: number, seconds: number): Promise<Sample[]> {
  const samples: Sample[] = [];
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        const status = await send(agent, url);
        samples.push({ status, ms: performance.now() - t });
      }
    }),
  );
  return samples;
}

/** `rate` requests per second for `seconds`, each latency from the moment its request was due. */
async function openLoop(agent: Agent, url: string, rate: number, seconds: number): Promise<Sample[]> {
  const samples: Sample[] = [];
  const pending: Promise<void>[] = [];
  const start = performance.now();
  const total = Math.round(rate * seconds);
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate));
    for (; sent < due; sent++) {
      const at = start + (sent * 1000) / rate;
      pending.push(send(agent, url).then((status) => void samples.push({ status, ms: performance.now() - at })));
    }
    await sleep(1);
  }
  await Promise.all(pending);
  return samples;
}

function rowText(row: Row): string {
  const ok = row.samples
    .filter((s) => s.status === 200)
    .map((s) => s.ms)
    .sort((a, b) => a - b);
  const refused = row.samples
    .filter((s) => s.status === 503)
    .map((s) => s.ms)
    .sort((a, b) => a - b);
  const other = row.samples.length - ok.length - refused.length;
  const f = (v: number | undefined) => (v === undefined ? '-' : v.toFixed(1));
  const share = row.samples.length === 0 ? 0 : (100 * refused.length) / row.samples.length;
  return `| ${row.label} | ${row.offered} | ${(ok.length / row.seconds).toFixed(0)} | ${f(percentile(ok, 50))} | ${f(percentile(ok, 99))} | ${share.toFixed(1)}% | ${f(percentile(refused, 99))} | ${other} |`;
}

function machineLine(): string {
  const m = describeMachine();
  return `${m.cpuModel} x ${m.nproc}, Node ${m.node}, commit ${m.commit}${m.dirty ? ' (dirty)' : ''}, load ${load1().toFixed(2)}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '10' },
      concurrency: { type: 'string', default: '16' },
      'service-ms': { type: 'string', default: '20' },
      out: { type: 'string' },
      'no-pin': { type: 'boolean', default: false },
    },
  });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const serviceMs = Number(values['service-ms']);
  const pinning = detectPinning(!values['no-pin']);
  const backend = await startQueueingBackend(concurrency, serviceMs);
  const agent = new Agent({ connections: null, keepAliveTimeout: 60_000 });
  const rows: Row[] = [];
  mkdirSync(CACHE_DIR, { recursive: true });
  const file = resolve(CACHE_DIR, 'overload.yaml');
  writeFileSync(
    file,
    `routes:
  - { method: GET, route: /plain, service: 127.0.0.1:${backend.port}, path: /work }
  - { method: GET, route: /admitted, service: 127.0.0.1:${backend.port}, path: /work, admission: { maxInFlight: ${concurrency} } }
config:
  timeouts: { backendSec: 120 }
  limits: { connectionsPerOrigin: 4096 }
  circuitBreaker: { enabled: false }
`,
  );
  const port = await freePort();
  const portico = await startProcess({
    name: 'portico',
    command: process.execPath,
    args: porticoStartArgs(file, port),
    core: pinning?.proxyCore,
    env: { PORTICO_LOG_LEVEL: 'warn' },
    ready: { kind: 'health', port, path: '/health' },
    timeoutMs: 30_000,
  });
  try {
    const base = `http://127.0.0.1:${port}/api`;
    // Warm-up: connections opened, code compiled.
    await closedLoop(agent, `${base}/admitted`, concurrency, Math.min(2, seconds));
    const atCapacity = await closedLoop(agent, `${base}/admitted`, concurrency, seconds);
    const capacity = atCapacity.filter((s) => s.status === 200).length / seconds;
    rows.push({ label: `at capacity: ${concurrency} closed-loop clients`, offered: '-', samples: atCapacity, seconds });
    const rate = 2 * capacity;
    const offered = `${rate.toFixed(0)} (2x)`;
    // Served per second over the whole run, the wait for the last answers included.
    const timed = async (label: string, path: string): Promise<Row> => {
      const t = performance.now();
      const samples = await openLoop(agent, `${base}${path}`, rate, seconds);
      return { label, offered, samples, seconds: (performance.now() - t) / 1000 };
    };
    rows.push(await timed('no admission control', '/plain'));
    rows.push(await timed(`admission.maxInFlight: ${concurrency}`, '/admitted'));
    const lines = [
      '# Overload: admission control',
      '',
      `Backend: ${concurrency} at a time, ${serviceMs} ms each (capacity ${(1000 * concurrency) / serviceMs} req/s); ${seconds} s per row.`,
      `Machine: ${machineLine()}`,
      '',
      '| row | offered req/s | 200 per s | p50 200 (ms) | p99 200 (ms) | refused 503 | p99 503 (ms) | other |',
      '|---|---|---|---|---|---|---|---|',
      ...rows.map(rowText),
      '',
      'Goal: p99 of the admitted (200) answers with admission control <= 2x the p99 at capacity.',
    ];
    emitResults(lines.join('\n'), values.out);
  } finally {
    await agent.close();
    await portico.stop();
    await backend.close();
  }
}

runBench(main);
