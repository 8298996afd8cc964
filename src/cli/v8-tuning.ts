/**
 * V8 settings for a gateway process, set by the CLI before anything else loads.
 *
 * V8's defaults suit a browser tab or a batch job; a gateway's heap is small, steady and churned by
 * every request (the measurements are in docs/performance.md):
 *
 * - Allocation-site pretenuring misfires. V8 sees some request objects survive a scavenge (they
 *   were in flight) and starts allocating that site's objects directly in the old generation.
 *   Those die with the request, but while dead in the old generation they keep every young object
 *   they point to alive, so scavenges copy far more than they need to. It is turned off.
 * - On a machine with a large heap limit the old generation may grow to several times its live
 *   size between mark-compacts. A fixed, small growth factor keeps it near the live size; a
 *   mark-compact of a gateway-sized heap is short, so the extra ones cost nothing noticeable.
 * - The young generation grows to large semi-spaces. Once pretenuring is off few objects survive
 *   a scavenge, so smaller semi-spaces cost little and save memory. The size can only be set on
 *   node's command line; `capYoungGeneration` caps it at run time instead.
 * - undici parses HTTP/1 with llhttp compiled to WebAssembly. The first response makes V8 tier
 *   its large parser function up with TurboFan, whose loop unrolling takes a large compile zone
 *   for a long compile. Without unrolling it takes less memory and the parser runs as fast.
 *
 * A flag the operator passes (node options or NODE_OPTIONS) wins: Portico then leaves that
 * setting alone.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

interface Tuning {
  /** The flag to set. */
  readonly flag: string;
  /** Operator flags that mean "I have chosen this myself". */
  readonly unlessGiven: readonly string[];
}

const V8_TUNING: readonly Tuning[] = [
  { flag: '--no-allocation-site-pretenuring', unlessGiven: ['--allocation-site-pretenuring'] },
  {
    flag: '--heap-growing-percent=30',
    unlessGiven: ['--heap-growing-percent', '--max-old-space-size', '--max-heap-size'],
  },
  { flag: '--no-wasm-loop-unrolling', unlessGiven: ['--wasm-loop-unrolling', '--liftoff-only', '--no-liftoff'] },
];

/** Semi-space size (MB) the young generation is capped at, unless the operator sized it. */
export const SEMI_SPACE_CAP_MB = 4;
const SEMI_SPACE_FLAGS = [
  '--max-semi-space-size',
  '--min-semi-space-size',
  '--semi-space-growth-factor',
  '--max-heap-size',
];

/** Flag names (`--no-` kept, `_` read as `-`) in node's own arguments and NODE_OPTIONS. */
export function givenFlags(execArgv: readonly string[], nodeOptions: string | undefined): Set<string> {
  const names = new Set<string>();
  for (const arg of [...execArgv, ...(nodeOptions ?? '').split(/\s+/)]) {
    if (!arg.startsWith('--')) continue;
    const name = (arg.split('=', 1)[0] ?? arg).replaceAll('_', '-');
    names.add(name);
    if (name.startsWith('--no-')) names.add(`--${name.slice(5)}`);
  }
  return names;
}

/** The flags to set given what the operator passed. */
export function tuningFlags(given: ReadonlySet<string>): string[] {
  return V8_TUNING.filter((t) => !t.unlessGiven.some((f) => given.has(f))).map((t) => t.flag);
}

/**
 * The semi-space growth factor for a young generation of `newSpaceBytes` (both semi-spaces, as
 * `v8.getHeapSpaceStatistics()` reports it): V8's default 2 below the cap, 1 (no growth) at it.
 */
export function growthFactorFor(newSpaceBytes: number, semiSpaceCapMb: number): 1 | 2 {
  return newSpaceBytes >= 2 * semiSpaceCapMb * 1024 * 1024 ? 1 : 2;
}

function newSpaceBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * Keeps the young generation's semi-spaces at or below `semiSpaceCapMb`. V8 doubles them (up to
 * 16 MB, 64 MB on V8 13) after scavenges that copied more than their size, and halves them when
 * allocation stops; it reads the growth factor at each decision. After every collection this
 * sets the factor to 1 once the cap is reached and back to 2 below it (after V8 shrank the space
 * while idle). Growth needs a semi-space's worth of survivors since the last growth, so between
 * event-loop turns the observer is in time. It is not within one long synchronous stretch, such
 * as loading the gateway's modules, when its callbacks cannot run: the factor therefore starts
 * at 1, and growth begins with the first callback, once start-up yields to the event loop
 * (at 2 from the start, the young generation reached 32 MB before the first one). The observer
 * does not keep the process alive.
 */
export function capYoungGeneration(semiSpaceCapMb: number): void {
  let factor = 1;
  /** Worker threads running: while any does, the factor is set again after every collection. */
  let workers = 0;
  const set = (wanted: 1 | 2) => {
    setFlagsFromString(`--semi-space-growth-factor=${wanted}`);
    factor = wanted;
  };
  set(1);
  const adjust = () => {
    const wanted = growthFactorFor(newSpaceBytes(), semiSpaceCapMb);
    if (wanted !== factor || workers > 0) set(wanted);
  };
  const observer = new PerformanceObserver(adjust);
  observer.observe({ entryTypes: ['gc'] });
  // The factor is one setting for the whole process, and V8 raises it back to 2 whenever an isolate
  // configures its heap: a worker thread starting (a reload's config loader) would otherwise let the
  // main thread's semi-spaces grow past the cap (to 16 MB each during a reload of 10,000 routes).
  // The worker's heap is configured before it reports `online`. The factor goes back to 1, as at
  // start-up: below the cap, 2 would let a synchronous stretch right after (a reload's compile)
  // double the semi-spaces more than once before the next callback (32 MB seen for an 8 MB cap);
  // the next collection's callback lets them grow again. A worker may start isolates of its own
  // after `online` (on Node 20, a loader registered by an `--import` module runs on a thread of
  // its own per worker), so while one runs the factor is set after every collection.
  process.on('worker', (worker) => {
    let online = false;
    worker.once('online', () => {
      online = true;
      workers++;
      set(1);
    });
    worker.once('exit', () => {
      if (online) workers--;
      adjust();
    });
  });
}

/** False when `PORTICO_V8_TUNING` turns the tuning off (`off`, `false`, `0`, `no`). */
export function tuningWanted(setting: string | undefined): boolean {
  return !['off', 'false', '0', 'no'].includes((setting ?? '').trim().toLowerCase());
}

let applied: readonly string[] = [];

/** What `applyV8Tuning` set in this process (the `portico listening` log line shows it). */
export function appliedV8Tuning(): readonly string[] {
  return applied;
}

/** Sets the tuning in this process and records it (the semi-space cap as `semi-space cap 4 MB`). */
export function applyV8Tuning(execArgv: readonly string[], nodeOptions: string | undefined): void {
  const given = givenFlags(execArgv, nodeOptions);
  const flags = tuningFlags(given);
  for (const flag of flags) setFlagsFromString(flag);
  if (!SEMI_SPACE_FLAGS.some((f) => given.has(f))) {
    capYoungGeneration(SEMI_SPACE_CAP_MB);
    flags.push(`semi-space cap ${SEMI_SPACE_CAP_MB} MB`);
  }
  applied = flags;
}
