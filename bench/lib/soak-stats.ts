/**
 * Bookkeeping of the fault soak (bench/soak-faults.ts): outcomes per route judged against each
 * route's contract, the RSS trend, warn lines of the gateway's log by minute and by message, and
 * what /proc says about a process's descriptors and a port's TCP connections.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Outcomes of one route: counts by status code (or error name) and the unexpected ones. */
export class RouteTally {
  sent = 0;
  unexpected = 0;
  readonly outcomes = new Map<string, number>();
  /** The first few unexpected outcomes with their detail, for the report. */
  readonly samples: string[] = [];
  /** Counts that explain the route's figures beyond status codes (events seen, tags missing...). */
  readonly notes = new Map<string, number>();

  constructor(
    readonly name: string,
    readonly contract: string,
    private readonly maxSamples = 5,
  ) {}

  /** Records one outcome (`200`, `504`, `aborted`, `error:ECONNRESET`...); `problem` marks it unexpected. */
  record(outcome: string, problem?: string): void {
    this.sent++;
    this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1);
    if (problem !== undefined) this.fail(problem);
  }

  /** Marks something unexpected that is not a request of its own (a check on a request already counted). */
  fail(problem: string): void {
    this.unexpected++;
    if (this.samples.length < this.maxSamples) this.samples.push(problem);
  }

  note(what: string, n = 1): void {
    this.notes.set(what, (this.notes.get(what) ?? 0) + n);
  }

  /** `200: 812, 429: 20` sorted by count. */
  outcomeText(): string {
    return [...this.outcomes.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k}: ${n}`)
      .join(', ');
  }
}

/**
 * Least-squares slope of `mb` against time, in MB per minute; undefined with fewer than 3 samples.
 * @example rssSlopePerMin([{ tMs: 0, mb: 100 }, { tMs: 60_000, mb: 101 }, { tMs: 120_000, mb: 102 }]) // 1
 */
export function rssSlopePerMin(samples: readonly { readonly tMs: number; readonly mb: number }[]): number | undefined {
  if (samples.length < 3) return undefined;
  const n = samples.length;
  const mt = samples.reduce((s, p) => s + p.tMs, 0) / n;
  const mm = samples.reduce((s, p) => s + p.mb, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of samples) {
    num += (p.tMs - mt) * (p.mb - mm);
    den += (p.tMs - mt) ** 2;
  }
  return den === 0 ? undefined : (num / den) * 60_000;
}

export interface WarnLine {
  /** Epoch ms (the log line's `time`). */
  readonly time: number;
  readonly msg: string;
  /** True when the line is the expected by-product of a fault injected on purpose all along (the hanging route). */
  readonly byDesign: boolean;
}

/** Warn lines (and worse) of the gateway's log, kept bounded: counts only, never the lines. */
export class WarnLog {
  /** Count per minute since `startMs` (index = minute). */
  readonly perMinute: number[] = [];
  readonly byMessage = new Map<string, number>();
  private readonly windowCounts: { start: number; end: number; all: number; outage: number }[] = [];
  total = 0;

  constructor(private readonly startMs: number) {}

  add(line: WarnLine): void {
    this.total++;
    const minute = Math.max(0, Math.floor((line.time - this.startMs) / 60_000));
    while (this.perMinute.length <= minute) this.perMinute.push(0);
    this.perMinute[minute]!++;
    // Bounded: the message text is a fixed string in the gateway's code, so few distinct keys.
    if (this.byMessage.size < 200 || this.byMessage.has(line.msg))
      this.byMessage.set(line.msg, (this.byMessage.get(line.msg) ?? 0) + 1);
    for (const w of this.windowCounts) {
      if (line.time >= w.start && line.time < w.end) {
        w.all++;
        if (!line.byDesign) w.outage++;
      }
    }
  }

  /** Starts counting lines of [start, end) as an outage window (its end may be moved later). */
  openWindow(start: number, end: number): { setEnd(end: number): void } {
    const w = { start, end, all: 0, outage: 0 };
    this.windowCounts.push(w);
    return { setEnd: (e) => (w.end = e) };
  }

  /**
   * Lines per minute inside outage windows (clipped at `nowMs`): all of them, and those not by
   * design. Undefined when no window has begun.
   */
  outageRate(
    nowMs: number,
  ): { minutes: number; all: number; outage: number; allPerMin: number; outagePerMin: number } | undefined {
    let ms = 0;
    let all = 0;
    let outage = 0;
    for (const w of this.windowCounts) {
      const end = Math.min(w.end, nowMs);
      if (end <= w.start) continue;
      ms += end - w.start;
      all += w.all;
      outage += w.outage;
    }
    if (ms === 0) return undefined;
    const minutes = ms / 60_000;
    return { minutes, all, outage, allPerMin: all / minutes, outagePerMin: outage / minutes };
  }

  top(n: number): [string, number][] {
    return [...this.byMessage.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
  }
}

/** Open file descriptors of a process (Linux /proc), or undefined when unreadable. */
export function fdCount(pid: number): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

/**
 * Established TCP connections whose local port is `port` (the server side of a local listener),
 * from /proc/net/tcp and tcp6: what a backend in another process has open.
 */
export function establishedOnPort(port: number): number {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  let n = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // cols[1]: local address ADDR:PORT in hex; cols[3]: state, 01 = ESTABLISHED.
      if (cols[3] === '01' && cols[1]?.endsWith(`:${hex}`)) n++;
    }
  }
  return n;
}
