/**
 * The load generator: wrk when installed (one thread, pinned beside the backend), else autocannon.
 * wrk reports through a Lua `done()` hook that prints one JSON line, so nothing is scraped from
 * its human-readable output. Latencies are in milliseconds.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { CACHE_DIR, ROOT, pinned } from './processes.js';

export type LoadGenerator = 'wrk' | 'autocannon';

export interface LoadSpec {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly connections: number;
  readonly durationSec: number;
  readonly core: number | undefined;
}

export interface LoadResult {
  readonly requests: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Socket errors and timeouts. */
  readonly errors: number;
  /** Answers outside 2xx/3xx. */
  readonly badStatus: number;
}

/** wrk when it runs here, else autocannon (a devDependency). `preferred` forces one. */
export function pickLoadGenerator(preferred: string | undefined): LoadGenerator {
  if (preferred === 'autocannon') return 'autocannon';
  const wrk = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  const present = wrk.error === undefined && /^wrk \S+/m.test(`${wrk.stdout}${wrk.stderr}`);
  if (preferred === 'wrk' && !present) throw new Error('--loadgen wrk: wrk is not installed');
  return present ? 'wrk' : 'autocannon';
}

/** `wrk 4.1.0 ...` or `autocannon 8.x`, for the results header. */
export function loadGeneratorVersion(gen: LoadGenerator): string {
  if (gen === 'wrk') {
    const out = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
    return (/^wrk \S+/m.exec(`${out.stdout}${out.stderr}`)?.[0] ?? 'wrk').replace('debian/', '');
  }
  const out = spawnSync(process.execPath, [resolve(ROOT, 'node_modules/autocannon/autocannon.js'), '--version'], {
    encoding: 'utf8',
  });
  return `autocannon ${(/autocannon v?([\d.]+)/.exec(out.stdout)?.[1] ?? '').trim()}`.trim();
}

/** Runs one timed load and resolves with its figures; rejects when the generator fails. */
export function runLoad(gen: LoadGenerator, spec: LoadSpec): Promise<LoadResult> {
  return gen === 'wrk' ? runWrk(spec) : runAutocannon(spec);
}

function luaString(s: string): string {
  return JSON.stringify(s); // a JSON string literal is a valid Lua string literal for this ASCII
}

function wrkScript(spec: LoadSpec): string {
  const lines = [`wrk.method = ${luaString(spec.method)}`];
  for (const [k, v] of Object.entries(spec.headers)) lines.push(`wrk.headers[${luaString(k)}] = ${luaString(v)}`);
  if (spec.body !== undefined) lines.push(`wrk.body = ${luaString(spec.body)}`);
  lines.push(
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format(\'BENCH_JSON {"requests":%.0f,"duration_us":%.0f,"connect":%.0f,"read":%.0f,"write":%.0f,"status":%.0f,"timeout":%.0f,"p50_us":%.0f,"p99_us":%.0f}\\n\',',
    '    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout, latency:percentile(50), latency:percentile(99)))',
    'end',
  );
  return lines.join('\n') + '\n';
}

async function runWrk(spec: LoadSpec): Promise<LoadResult> {
  const script = wrkScript(spec);
  mkdirSync(CACHE_DIR, { recursive: true });
  const file = resolve(CACHE_DIR, `wrk-${createHash('sha1').update(script).digest('hex').slice(0, 12)}.lua`);
  writeFileSync(file, script);
  const args = ['-t1', `-c${spec.connections}`, `-d${spec.durationSec}s`, '--timeout', '5s', '-s', file, spec.url];
  const out = await capture(...pinned(spec.core, 'wrk', args), spec.durationSec);
  const line = /BENCH_JSON (\{.*\})/.exec(out)?.[1];
  if (line === undefined) throw new Error(`wrk printed no result:\n${out.slice(-2000)}`);
  const r = JSON.parse(line) as Record<string, number>;
  const n = (k: string) => r[k] ?? 0;
  return {
    requests: n('requests'),
    rps: n('requests') / (n('duration_us') / 1e6),
    p50Ms: n('p50_us') / 1000,
    p99Ms: n('p99_us') / 1000,
    errors: n('connect') + n('read') + n('write') + n('timeout'),
    badStatus: n('status'),
  };
}

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const args = [
    resolve(ROOT, 'node_modules/autocannon/autocannon.js'),
    '-c',
    String(spec.connections),
    '-d',
    String(spec.durationSec),
    '-j',
    '-n',
    '-m',
    spec.method,
  ];
  for (const [k, v] of Object.entries(spec.headers)) args.push('-H', `${k}=${v}`);
  if (spec.body !== undefined) args.push('-b', spec.body);
  args.push(spec.url);
  const out = await capture(...pinned(spec.core, process.execPath, args), spec.durationSec);
  const start = out.indexOf('{');
  if (start < 0) throw new Error(`autocannon printed no result:\n${out.slice(-2000)}`);
  const r = JSON.parse(out.slice(start)) as {
    requests: { total: number };
    duration: number;
    latency: { p50: number; p99: number };
    errors: number;
    timeouts: number;
    non2xx: number;
  };
  return {
    requests: r.requests.total,
    rps: r.requests.total / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    errors: r.errors + r.timeouts,
    badStatus: r.non2xx,
  };
}

/** Runs a command to completion (bounded: its duration plus a margin) and returns its stdout. */
function capture(command: string, args: string[], durationSec: number): Promise<string> {
  return new Promise((resolveOut, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const killer = setTimeout(() => child.kill('SIGKILL'), (durationSec + 30) * 1000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(killer);
      if (code === 0) resolveOut(stdout);
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${stderr.slice(-1000)}`));
    });
  });
}
