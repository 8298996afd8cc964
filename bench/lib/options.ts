/**
 * `npm run bench -- [flags]`; every flag also reads from an environment variable so CI-like
 * wrappers can set them. Durations are short by default and bounded.
 */
import { parseArgs } from 'node:util';

export interface BenchOptions {
  readonly quick: boolean;
  readonly durationSec: number;
  readonly warmupSec: number;
  readonly rounds: number;
  readonly connections: number;
  readonly scenarios: readonly string[] | undefined;
  readonly candidates: readonly string[] | undefined;
  readonly loadgen: string | undefined;
  readonly pin: boolean;
  readonly build: boolean;
  readonly write: boolean;
  readonly porticoLogLevel: string | undefined;
  /** Use the Node backend even when nginx is installed. */
  readonly nodeBackend: boolean;
}

export const USAGE = `npm run bench -- [options]
  --quick                 2 s runs, 1 s warm-up (about 2 minutes for everything)   BENCH_QUICK=1
  --duration SEC          seconds per measured run (default 8)                      BENCH_DURATION
  --warmup SEC            warm-up per candidate and scenario, first round (default 2) BENCH_WARMUP
  --rounds N              interleaved rounds, medians reported (default 3)         BENCH_ROUNDS
  --connections N         concurrent connections (default 50)                      BENCH_CONNECTIONS
  --scenarios a,b         small,large,post (+ ids from bench/mapping.ts)           BENCH_SCENARIOS
  --candidates a,b        backend,node-floor,node-floor-duties,node-ceiling,fastify,portico,
                          portico-hs256,portico-metrics,
                          portico-mapcache (mapping scenario only),
                          portico-admin (admin listener on, one page open; when named)  BENCH_CANDIDATES
  --loadgen wrk|autocannon  default: wrk when installed                            BENCH_LOADGEN
  --no-pin                do not pin processes to cores with taskset
  --no-build              do not run \`npm run build\` first (uses dist/ as it is)
  --no-write              print only; do not write bench/results/
  --portico-log-level L   PORTICO_LOG_LEVEL for Portico (default: Portico's own, info)
  --node-backend          the Node backend (bench/backend.ts) even when nginx is installed
                          (nginx is used by default where it can answer)          BENCH_NODE_BACKEND=1
`;

const list = (v: string | undefined) =>
  v === undefined || v === ''
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || n > 3600) throw new Error(`${name} must be a number of 1..3600, got "${raw}"`);
  return Math.round(n);
}

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: 'boolean' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      scenarios: { type: 'string' },
      candidates: { type: 'string' },
      loadgen: { type: 'string' },
      'no-pin': { type: 'boolean' },
      'no-build': { type: 'boolean' },
      'no-write': { type: 'boolean' },
      'portico-log-level': { type: 'string' },
      'node-backend': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) return 'help';
  const quick = values.quick === true || env.BENCH_QUICK === '1';
  return {
    quick,
    durationSec: positive('--duration', values.duration ?? env.BENCH_DURATION, quick ? 2 : 8),
    warmupSec: positive('--warmup', values.warmup ?? env.BENCH_WARMUP, quick ? 1 : 2),
    rounds: positive('--rounds', values.rounds ?? env.BENCH_ROUNDS, 3),
    connections: positive('--connections', values.connections ?? env.BENCH_CONNECTIONS, 50),
    scenarios: list(values.scenarios ?? env.BENCH_SCENARIOS),
    candidates: list(values.candidates ?? env.BENCH_CANDIDATES),
    loadgen: values.loadgen ?? env.BENCH_LOADGEN,
    pin: values['no-pin'] !== true,
    build: values['no-build'] !== true,
    write: values['no-write'] !== true,
    porticoLogLevel: values['portico-log-level'] ?? env.PORTICO_LOG_LEVEL,
    nodeBackend: values['node-backend'] === true || env.BENCH_NODE_BACKEND === '1',
  };
}
