/**
 * gRPC through Portico against grpc-js direct (docs/performance.md "gRPC"): unary calls with a
 * small message, `--concurrency` of them in flight at once from one grpc-js client process, first
 * straight to a grpc-js server, then through Portico (h2c on both sides, a public `grpc: true`
 * route). Each row: calls/s, p50 and p99 latency, and the Portico row as a share of the direct one.
 *
 *   npm run build && node --import tsx bench/grpc.ts [--duration 10] [--concurrency 50] [--channels 4]
 *
 * Portico runs from dist/ when built (from the sources under tsx otherwise), pinned to its own
 * core when `taskset` exists; the server and the load share the other core, as in `npm run bench`.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { echoClient, startGrpcBackend, type EchoStub } from '../test/support/grpc-backend.js';
import { CACHE_DIR, detectPinning, freePort, startProcess, type Started } from './lib/processes.js';
import { porticoCommand } from './lib/candidates.js';

const SELF = fileURLToPath(import.meta.url);

const { values } = parseArgs({
  options: {
    role: { type: 'string' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '50' },
    channels: { type: 'string', default: '4' },
    'no-pin': { type: 'boolean', default: false },
    /** A directory: Portico runs with --cpu-prof and writes its profile there on exit. */
    'cpu-prof': { type: 'string' },
  },
});

if (values.role === 'backend') {
  const backend = await startGrpcBackend();
  process.stdout.write(`${JSON.stringify({ ready: true, port: Number(backend.host.split(':')[1]) })}\n`);
  process.once('SIGTERM', () => void backend.close().then(() => process.exit(0)));
} else {
  await main();
}

interface Row {
  readonly label: string;
  readonly calls: number;
  readonly perSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
}

async function main(): Promise<void> {
  const durationMs = Number(values.duration) * 1000;
  const warmupMs = Number(values.warmup) * 1000;
  const concurrency = Number(values.concurrency);
  const channels = Number(values.channels);
  const pinning = detectPinning(!values['no-pin']);
  // The load generator (this process) shares the backend's core.
  if (pinning !== undefined)
    spawnSync('taskset', ['-cp', String(pinning.loadCore), String(process.pid)], { stdio: 'ignore' });

  const started: Started[] = [];
  try {
    const backend = await startProcess({
      name: 'grpc-js server',
      command: process.execPath,
      args: ['--import', 'tsx', SELF, '--role', 'backend'],
      core: pinning?.loadCore,
      ready: { kind: 'stdout-line' },
    });
    started.push(backend);
    const port = await freePort();
    mkdirSync(CACHE_DIR, { recursive: true });
    const configFile = resolve(CACHE_DIR, 'grpc.yaml');
    writeFileSync(
      configFile,
      `config:
  basePath: "/"
  http2: { cleartext: true }
routes:
  - { method: POST, route: /echo.Echo/Unary, service: 127.0.0.1:${backend.port}, path: /echo.Echo/Unary, public: true, grpc: true }
`,
    );
    const { command, note } = porticoCommand(true);
    const portico = await startProcess({
      name: 'portico',
      command: command[0]!,
      args: [
        ...(values['cpu-prof'] === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${resolve(values['cpu-prof'])}`]),
        ...command.slice(1),
        'start',
        '--config',
        configFile,
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
      ],
      core: pinning?.proxyCore,
      drainCore: pinning?.loadCore,
      ready: { kind: 'health', port, path: '/health' },
    });
    started.push(portico);

    const rows = [
      await measure('grpc-js direct', `127.0.0.1:${backend.port}`),
      await measure('through Portico (h2c, grpc: true)', `127.0.0.1:${port}`),
    ];
    const direct = rows[0]!.perSec;
    process.stdout.write(
      `\ngRPC unary, ${concurrency} calls in flight over ${channels} channel(s), ${values.duration} s` +
        `${pinning === undefined ? ', not pinned' : ''}${note === undefined ? '' : `; ${note}`}\n\n` +
        '| target | calls/s | p50 ms | p99 ms | errors | of direct |\n|---|---|---|---|---|---|\n' +
        rows
          .map(
            (r) =>
              `| ${r.label} | ${Math.round(r.perSec)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.errors} | ${((100 * r.perSec) / direct).toFixed(0)}% |`,
          )
          .join('\n') +
        '\n',
    );
  } finally {
    for (const p of started.reverse()) await p.stop();
  }

  /** Keeps `concurrency` unary calls in flight on `address` for the warm-up, then for the measured time. */
  async function measure(label: string, address: string): Promise<Row> {
    const clients: EchoStub[] = [];
    for (let i = 0; i < channels; i++)
      // Each client its own channel and connection.
      clients.push(
        echoClient(address, grpc.credentials.createInsecure(), 'echo.Echo', { 'grpc.use_local_subchannel_pool': 1 }),
      );
    try {
      await run(clients, warmupMs);
      return { label, ...(await run(clients, durationMs)) };
    } finally {
      for (const c of clients) c.close();
    }
  }

  async function run(clients: EchoStub[], ms: number): Promise<Omit<Row, 'label'>> {
    const latencies: number[] = [];
    let errors = 0;
    const start = performance.now();
    const until = start + ms;
    const loop = async (client: EchoStub) => {
      while (performance.now() < until) {
        const t = performance.now();
        const ok = await new Promise<boolean>((done) =>
          client.Unary({ text: 'hello' }, new grpc.Metadata(), {}, (err) => done(err === null)),
        );
        if (ok) latencies.push(performance.now() - t);
        else errors++;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, (_, i) => loop(clients[i % clients.length]!)));
    const elapsed = (performance.now() - start) / 1000;
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    return { calls: latencies.length, perSec: latencies.length / elapsed, p50Ms: at(0.5), p99Ms: at(0.99), errors };
  }
}
