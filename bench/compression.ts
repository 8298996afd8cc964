/**
 * What response compression costs and saves (docs/compression.md), on the 20 KB JSON answer of
 * the composition bench (80 user records, bench/backend.ts `/records`), served by nginx.
 *
 *   node --import tsx bench/compression.ts [--duration 5] [--rounds 3] [--connections 10] [--out FILE]
 *
 * Two parts, one run:
 * 1. The codecs alone, in this process: for each algorithm and level, the encoded size (bytes
 *    saved) and the CPU time per KB of input (median of timed batches of one-shot encodes), on
 *    the records and on a less regular JSON (20 KB of schema/portico.schema.json).
 * 2. Requests/s through proxies that compress, each coding at Portico's default level: Portico
 *    with `compression` on, next to a plain Node proxy compressing the same body with the same
 *    settings (bench/node-compress-proxy.ts: the Node floor plus a zlib pipe; and the same reading
 *    the body whole and encoding it in one call, as Portico does below 64 KiB), and both without
 *    compression (Portico; the Node floor) for what compression itself costs. Goal (issue
 *    "Response caching and compression"): Portico >= 0.9x the plain Node proxy's requests/s.
 * Rounds rotate the rows so that drift hits them all alike; medians of the rounds.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import zlib from 'node:zlib';
import {
  CACHE_DIR,
  ROOT,
  freePort,
  porticoStartArgs,
  startProcess,
  transpileEntry,
  type Started,
} from './lib/processes.js';
import { loadGeneratorVersion } from './lib/load.js';
import { getLoad, rotateRows, rowFlags } from './lib/rotating-rows.js';
import { recordsBody, startRecordsNginx } from './lib/records-nginx.js';
import { describeMachine } from './lib/machine.js';
import { emitResults, median, runBench } from './lib/report.js';
import { CompressionSchema } from '../src/config/schema/compression.js';

const DEFAULT_LEVELS = CompressionSchema.parse({}).levels;
const LEVELS: Record<'gzip' | 'br', readonly number[]> = { gzip: [1, 3, 5, 6, 9], br: [1, 3, 4, 5, 6, 9, 11] };

function encodeSync(coding: 'gzip' | 'br', level: number, body: Buffer): Buffer {
  return coding === 'gzip'
    ? zlib.gzipSync(body, { level })
    : zlib.brotliCompressSync(body, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: level,
          [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        },
      });
}

/** Median microseconds of CPU per KB of input over timed batches. */
function cpuPerKb(coding: 'gzip' | 'br', level: number, body: Buffer): number {
  const batch = 20;
  const samples: number[] = [];
  for (let i = 0; i < 3; i++) encodeSync(coding, level, body); // warm-up
  const until = performance.now() + 400;
  while (performance.now() < until || samples.length < 5) {
    const before = process.cpuUsage();
    for (let i = 0; i < batch; i++) encodeSync(coding, level, body);
    const used = process.cpuUsage(before);
    samples.push((used.user + used.system) / batch / (body.length / 1024));
  }
  return median(samples);
}

interface Row {
  readonly id: string;
  readonly label: string;
  readonly url: string;
  readonly accept: string | undefined;
}

async function main(): Promise<void> {
  const flags = rowFlags({ connections: '10' });
  const { durationSec, rounds, connections, pinning, loadgen } = flags;
  const started: Started[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'portico-bench-compression-'));
  try {
    // The body: the composition bench's 20 KB of records, from the bench backend itself.
    const body = await recordsBody();

    // A less regular one beside it: 20 KB of the gateway's JSON schema (long, varied descriptions).
    const varied = readFileSync(resolve(ROOT, 'schema/portico.schema.json')).subarray(0, 20 * 1024);
    const codecRows: string[] = [];
    for (const coding of ['gzip', 'br'] as const)
      for (const level of LEVELS[coding]) {
        const cells = [body, varied].map((b) => {
          const size = encodeSync(coding, level, b).length;
          const us = cpuPerKb(coding, level, b);
          process.stderr.write(`codec ${coding} ${level}: ${size} of ${b.length} bytes, ${us.toFixed(1)} us/KB\n`);
          return `${size} | ${(100 * (1 - size / b.length)).toFixed(1)}% | ${us.toFixed(1)}`;
        });
        const mark = DEFAULT_LEVELS[coding] === level ? ' (default)' : '';
        codecRows.push(`| ${coding} ${level}${mark} | ${cells.join(' | ')} |`);
      }

    const nginx = await startRecordsNginx(dir, body, pinning?.loadCore);
    started.push(nginx);
    const nginxPort = nginx.port;
    const backend = `http://127.0.0.1:${nginxPort}`;
    mkdirSync(CACHE_DIR, { recursive: true });
    const yaml = (enabled: boolean) => `config:
  limits: { connectionsPerOrigin: 256 }
  compression: { enabled: ${enabled}, algorithms: [br, gzip] }
routes:
  - { method: GET, route: /records, service: 127.0.0.1:${nginxPort}, path: /records }
`;
    const portico = async (name: string, enabled: boolean, env: Record<string, string> = {}) => {
      const file = resolve(CACHE_DIR, `compression-${name}.yaml`);
      writeFileSync(file, yaml(enabled));
      const port = await freePort();
      started.push(
        await startProcess({
          name,
          command: process.execPath,
          args: porticoStartArgs(file, port),
          core: pinning?.proxyCore,
          env: { PORTICO_LOG_LEVEL: 'warn', ...env },
          ready: { kind: 'health', port, path: '/health' },
          timeoutMs: 30_000,
        }),
      );
      return `http://127.0.0.1:${port}`;
    };
    const nodeProxy = async (name: string, args: string[]) => {
      const p = await startProcess({
        name,
        command: process.execPath,
        args: [transpileEntry(resolve(ROOT, `bench/${name.split(' ')[0]}.ts`)), backend, '0', ...args],
        core: pinning?.proxyCore,
        ready: { kind: 'stdout-line' },
      });
      started.push(p);
      return `http://127.0.0.1:${p.port}`;
    };
    const porticoOn = await portico('portico-compress', true);
    const porticoOff = await portico('portico-plain', false);
    // The same gateway without its V8 tuning (src/cli/v8-tuning.ts): the profile of the gzip row
    // put more garbage-collection time in Portico than in the reference, less with the tuning off.
    const porticoUntuned = await portico('portico-compress-untuned', true, { PORTICO_V8_TUNING: 'off' });
    const gzipNode = await nodeProxy('node-compress-proxy gzip', ['gzip', String(DEFAULT_LEVELS.gzip)]);
    const brNode = await nodeProxy('node-compress-proxy br', ['br', String(DEFAULT_LEVELS.br)]);
    const gzipOneShot = await nodeProxy('node-compress-proxy gzip one-shot', [
      'gzip',
      String(DEFAULT_LEVELS.gzip),
      'oneshot',
    ]);
    const brOneShot = await nodeProxy('node-compress-proxy br one-shot', ['br', String(DEFAULT_LEVELS.br), 'oneshot']);
    const floor = await nodeProxy('node-floor', []);
    const rows: Row[] = [
      { id: 'portico-br', label: `Portico, br ${DEFAULT_LEVELS.br}`, url: porticoOn, accept: 'br' },
      { id: 'node-br', label: `plain Node proxy, br ${DEFAULT_LEVELS.br}`, url: brNode, accept: 'br' },
      {
        id: 'node-br-oneshot',
        label: `plain Node proxy, br ${DEFAULT_LEVELS.br}, one-shot`,
        url: brOneShot,
        accept: 'br',
      },
      { id: 'portico-gzip', label: `Portico, gzip ${DEFAULT_LEVELS.gzip}`, url: porticoOn, accept: 'gzip' },
      { id: 'node-gzip', label: `plain Node proxy, gzip ${DEFAULT_LEVELS.gzip}`, url: gzipNode, accept: 'gzip' },
      {
        id: 'node-gzip-oneshot',
        label: `plain Node proxy, gzip ${DEFAULT_LEVELS.gzip}, one-shot`,
        url: gzipOneShot,
        accept: 'gzip',
      },
      {
        id: 'portico-br-untuned',
        label: `Portico, br ${DEFAULT_LEVELS.br}, PORTICO_V8_TUNING=off`,
        url: porticoUntuned,
        accept: 'br',
      },
      {
        id: 'portico-gzip-untuned',
        label: `Portico, gzip ${DEFAULT_LEVELS.gzip}, PORTICO_V8_TUNING=off`,
        url: porticoUntuned,
        accept: 'gzip',
      },
      { id: 'portico-identity', label: 'Portico, compression off', url: porticoOff, accept: 'gzip, br' },
      { id: 'floor-identity', label: 'Node floor, no compression', url: floor, accept: 'gzip, br' },
    ];
    const load = (row: Row, seconds: number) =>
      getLoad(
        flags,
        `${row.url}/api/records`,
        seconds,
        row.accept === undefined ? {} : { 'accept-encoding': row.accept },
      );
    const sizes = new Map<string, number>();
    for (const row of rows) await load(row, 1); // warm-up: JIT and pools, not measured
    for (const row of rows) sizes.set(row.id, await wireSize(row));
    const figures = await rotateRows(rows, { rounds, durationSec, warmUp: async () => undefined, measure: load });
    const rps = (id: string) => figures.get(id)!.rps;
    const m = describeMachine();
    const ratio = (a: string, b: string) => (rps(a) / rps(b)).toFixed(2);
    const lines = [
      `# Response compression (${new Date().toISOString().slice(0, 10)}, ${m.commit}${m.dirty ? ', uncommitted changes' : ''})`,
      '',
      `Machine: ${m.cpuModel}, ${m.nproc} CPUs, kernel ${m.kernel}; Node ${m.node}; ${loadGeneratorVersion(loadgen)}.`,
      `Command: \`node --import tsx bench/compression.ts --duration ${durationSec} --rounds ${rounds} --connections ${connections}\`.`,
      `Body: ${body.length} bytes of JSON (80 user records). ${pinning ? `Proxies on core ${pinning.proxyCore}, nginx and load on core ${pinning.loadCore}` : 'No CPU pinning'}.`,
      '',
      '## The codecs alone (one-shot encodes in one process)',
      '',
      `Records: the ${body.length} bytes above; schema: the first ${varied.length} bytes of schema/portico.schema.json, less regular.`,
      '',
      '| coding and level | records: bytes | saved | CPU us per KB | schema: bytes | saved | CPU us per KB |',
      '|---|---|---|---|---|---|---|',
      ...codecRows,
      '',
      `## Through a proxy (${connections} connections, ${rounds} rounds x ${durationSec} s, rotating; medians)`,
      '',
      '| row | req/s (spread) | p99 ms | bytes on the wire |',
      '|---|---|---|---|',
      ...rows.map((row) => {
        const f = figures.get(row.id)!;
        return `| ${row.label} | ${Math.round(f.rps)} (${f.spread}) | ${f.p99} | ${sizes.get(row.id)} |`;
      }),
      '',
      `- br: Portico ${ratio('portico-br', 'node-br')}x the plain Node proxy (goal >= 0.9x); ${ratio('portico-br', 'node-br-oneshot')}x the one-shot one.`,
      `- gzip: Portico ${ratio('portico-gzip', 'node-gzip')}x the plain Node proxy (goal >= 0.9x); ${ratio('portico-gzip', 'node-gzip-oneshot')}x the one-shot one.`,
      '- The plain Node proxy streams the body through a zlib stream (what `pipeline` gives); its one-shot',
      '  variant reads the body whole and encodes it in one call, as Portico does with an answer of declared',
      '  length up to 64 KiB (docs/compression.md, "Speed").',
      `- Without its V8 tuning (PORTICO_V8_TUNING=off): br ${ratio('portico-br-untuned', 'node-br-oneshot')}x, gzip ${ratio('portico-gzip-untuned', 'node-gzip-oneshot')}x the one-shot reference.`,
      "- The reference has Portico's duties on this answer: Accept-Encoding negotiated with q-values,",
      '  compressible types only, Vary on every answer; same levels and Brotli mode, so the same bytes (last column).',
      `- Without compression: Portico ${ratio('portico-identity', 'floor-identity')}x the Node floor.`,
      '',
    ];
    emitResults(lines.join('\n'), flags.out);
  } finally {
    for (const s of started.reverse()) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The answer's size as sent (encoded), read without decoding. */
async function wireSize(row: Row): Promise<number> {
  const { request } = await import('undici');
  const res = await request(`${row.url}/api/records`, {
    headers: row.accept === undefined ? {} : { 'accept-encoding': row.accept },
  });
  return (await res.body.arrayBuffer()).byteLength;
}

runBench(main);
