/**
 * Where a compressed answer's CPU goes, in Portico and in the one-shot reference
 * (bench/node-compress-proxy.ts `oneshot`: the body read whole and encoded in one call, Portico's
 * own work for an answer of declared length up to 64 KiB), profiled under the same short load:
 *
 *   node --import tsx bench/compression-profile.ts [--coding gzip|br] [--duration 5] [--rounds 2] [--connections 10] [--out FILE]
 *
 * Both run under `node --cpu-prof`, pinned to the proxy core, with load from the other core in
 * alternating rounds. Each profile is then read from its first codec sample on, the warm-up left
 * out, and its CPU time per area is given as a share of the codec's own time (node:zlib's
 * `processChunkSync`, the same coding of the same body in both): so the two columns compare per
 * answer, however loaded the machine is (absolute times are not, and requests/s from this run
 * are not figures). `busy / codec` is the whole: Portico's over the reference's is the inverse of
 * the requests/s ratio the CPU alone allows. Also given: CPU microseconds per request from
 * /proc (load-dependent, direction only) and the bytes on the wire of both answers.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import {
  CACHE_DIR,
  ROOT,
  detectPinning,
  freePort,
  porticoStartArgs,
  startProcess,
  transpileEntry,
} from './lib/processes.js';
import type { Started } from './lib/processes.js';
import { pickLoadGenerator, runLoad } from './lib/load.js';
import { describeMachine } from './lib/machine.js';
import { emitResults, median, runBench } from './lib/report.js';
import { recordsBody, startRecordsNginx } from './lib/records-nginx.js';
import { areaOf, type CpuProfile } from './profile-summary.js';
import { CompressionSchema } from '../src/config/schema/compression.js';

const DEFAULT_LEVELS = CompressionSchema.parse({}).levels;
/** Left out after the first codec sample: both processes' warm-up (1 s each) and some margin. */
const WARM_UP_US = 2_500_000;

/** CPU time (user + system, in clock ticks of 10 ms) the process has used so far. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

interface Shares {
  /** Sampled CPU time (idle excluded) over the codec's own. */
  readonly busyOverCodec: number;
  /** Per area (and per Portico file), CPU time over the codec's own. */
  readonly byArea: ReadonlyMap<string, number>;
}

/** A profile's CPU per area after the warm-up, relative to processChunkSync's self time. */
export function sharesOf(profile: CpuProfile): Shares {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let since: number | undefined;
  let elapsed = 0;
  let codec = 0;
  let busy = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const frame = byId.get(profile.samples[i]!)!.callFrame;
    const dt = profile.timeDeltas[i + 1] ?? 0;
    if (since === undefined) {
      if (frame.functionName !== 'processChunkSync') continue;
      since = i;
    }
    elapsed += dt;
    if (elapsed < WARM_UP_US || frame.functionName === '(idle)') continue;
    busy += dt;
    if (frame.functionName === 'processChunkSync') codec += dt;
    let area = areaOf(frame.url, frame.functionName);
    if (area === 'portico') area = /(src\/.+)$/.exec(frame.url)?.[1] ?? area;
    else if (area === 'node internals') area = /^node:(?:internal\/)?([a-z_]+)/.exec(frame.url)?.[0] ?? area;
    self.set(area, (self.get(area) ?? 0) + dt);
  }
  if (codec === 0) throw new Error('no codec samples after the warm-up: run longer (--duration)');
  return {
    busyOverCodec: busy / codec,
    byArea: new Map([...self].map(([k, v]) => [k, v / codec])),
  };
}

/** The main thread's profile (the largest file; tsx's loader thread writes one too). */
function mainProfile(dir: string): CpuProfile {
  const files = readdirSync(dir).map((f) => join(dir, f));
  files.sort((a, b) => readFileSync(b).length - readFileSync(a).length);
  return JSON.parse(readFileSync(files[0]!, 'utf8')) as CpuProfile;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      coding: { type: 'string', default: 'gzip' },
      duration: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '2' },
      connections: { type: 'string', default: '10' },
      out: { type: 'string' },
    },
  });
  const coding = values.coding === 'br' ? 'br' : 'gzip';
  const level = DEFAULT_LEVELS[coding];
  const durationSec = Number(values.duration);
  const rounds = Number(values.rounds);
  const connections = Number(values.connections);
  const pinning = detectPinning(true);
  const loadgen = pickLoadGenerator(undefined);
  const dir = mkdtempSync(join(tmpdir(), 'portico-bench-compression-profile-'));
  const profiles = { portico: join(dir, 'prof-portico'), reference: join(dir, 'prof-reference') };
  const started: Started[] = [];
  let lines: string[];
  try {
    const body = await recordsBody();
    const nginx = await startRecordsNginx(dir, body, pinning?.loadCore);
    started.push(nginx);
    mkdirSync(CACHE_DIR, { recursive: true });
    const file = resolve(CACHE_DIR, 'compression-profile.yaml');
    writeFileSync(
      file,
      `config:
  limits: { connectionsPerOrigin: 256 }
  compression: { enabled: true, algorithms: [${coding}] }
routes:
  - { method: GET, route: /records, service: 127.0.0.1:${nginx.port}, path: /records }
`,
    );
    const porticoPort = await freePort();
    const portico = await startProcess({
      name: 'portico',
      command: process.execPath,
      args: ['--cpu-prof', '--cpu-prof-dir', profiles.portico, ...porticoStartArgs(file, porticoPort)],
      core: pinning?.proxyCore,
      env: { PORTICO_LOG_LEVEL: 'warn' },
      ready: { kind: 'health', port: porticoPort, path: '/health' },
      timeoutMs: 60_000,
    });
    started.push(portico);
    const reference = await startProcess({
      name: 'node-compress-proxy oneshot',
      command: process.execPath,
      args: [
        '--cpu-prof',
        '--cpu-prof-dir',
        profiles.reference,
        transpileEntry(resolve(ROOT, 'bench/node-compress-proxy.ts')),
        `http://127.0.0.1:${nginx.port}`,
        '0',
        coding,
        String(level),
        'oneshot',
      ],
      core: pinning?.proxyCore,
      ready: { kind: 'stdout-line' },
    });
    started.push(reference);
    const rows = [
      { id: 'portico', label: `Portico, ${coding} ${level}`, p: portico },
      { id: 'reference', label: `plain Node proxy, ${coding} ${level}, one-shot`, p: reference },
    ] as const;
    const url = (p: Started) => `http://127.0.0.1:${p.port}/api/records`;
    const wire = new Map<string, number>();
    const framing = new Map<string, string>();
    for (const row of rows) {
      const res = await fetch(url(row.p), { headers: { 'accept-encoding': coding } });
      await res.arrayBuffer();
      // fetch decodes: the encoded size is what the proxy said it sent, asked once more without decoding.
      const { request } = await import('undici');
      const raw = await request(url(row.p), { headers: { 'accept-encoding': coding } });
      wire.set(row.id, (await raw.body.arrayBuffer()).byteLength);
      const length = raw.headers['content-length'];
      framing.set(row.id, length === undefined ? String(raw.headers['transfer-encoding']) : `length ${String(length)}`);
    }
    const load = (p: Started, seconds: number) =>
      runLoad(loadgen, {
        url: url(p),
        method: 'GET',
        headers: { 'accept-encoding': coding },
        connections,
        durationSec: seconds,
        core: pinning?.loadCore,
      });
    for (const row of rows) await load(row.p, 1);
    const cpuUs = new Map<string, number[]>(rows.map((r) => [r.id, []]));
    for (let r = 0; r < rounds; r++)
      for (const row of r % 2 === 0 ? rows : [...rows].reverse()) {
        const before = cpuTicks(row.p.pid);
        const res = await load(row.p, durationSec);
        cpuUs.get(row.id)!.push(((cpuTicks(row.p.pid) - before) * 10_000) / res.requests);
        process.stderr.write(`round ${r + 1} ${row.id}: ${Math.round(res.rps)} req/s\n`);
      }
    for (const s of started.splice(0).reverse()) await s.stop();

    const shares = {
      portico: sharesOf(mainProfile(profiles.portico)),
      reference: sharesOf(mainProfile(profiles.reference)),
    };
    const areas = new Set([...shares.portico.byArea.keys(), ...shares.reference.byArea.keys()]);
    const pct = (x: number | undefined) => `${((x ?? 0) * 100).toFixed(1)}%`;
    const tableRows = [...areas]
      .map((a) => ({ a, p: shares.portico.byArea.get(a) ?? 0, r: shares.reference.byArea.get(a) ?? 0 }))
      .filter((x) => x.p >= 0.003 || x.r >= 0.003)
      .sort((x, y) => Math.abs(y.p - y.r) - Math.abs(x.p - x.r))
      .map((x) => `| ${x.a} | ${pct(x.p)} | ${pct(x.r)} | ${pct(x.p - x.r)} |`);
    const m = describeMachine();
    lines = [
      `# Compression profile, ${coding} ${level} (${new Date().toISOString().slice(0, 10)}, ${m.commit}${m.dirty ? ', uncommitted changes' : ''})`,
      '',
      `Machine: ${m.cpuModel}, ${m.nproc} CPUs; Node ${m.node}. Command: \`node --import tsx bench/compression-profile.ts --coding ${coding} --duration ${durationSec} --rounds ${rounds} --connections ${connections}\`.`,
      `Body: ${body.length} bytes of JSON; on the wire: Portico ${wire.get('portico')} bytes (${framing.get('portico')}), reference ${wire.get('reference')} bytes (${framing.get('reference')}).`,
      '',
      `- busy / codec: Portico ${shares.portico.busyOverCodec.toFixed(3)}, reference ${shares.reference.busyOverCodec.toFixed(3)}: the CPU alone allows Portico ${(shares.reference.busyOverCodec / shares.portico.busyOverCodec).toFixed(2)}x the reference's requests/s.`,
      `- CPU us per request (from /proc, load-dependent; medians of ${rounds} rounds): Portico ${median(cpuUs.get('portico')!).toFixed(0)}, reference ${median(cpuUs.get('reference')!).toFixed(0)}.`,
      '',
      "CPU per area as a share of the codec's own time (processChunkSync), largest differences first:",
      '',
      '| area | Portico | reference | difference |',
      '|---|---:|---:|---:|',
      ...tableRows,
      '',
    ];
  } finally {
    for (const s of started.reverse()) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  emitResults(lines.join('\n'), values.out);
}

runBench(main);
