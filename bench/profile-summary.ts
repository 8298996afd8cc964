/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): where the time went by area (Portico,
 * undici, pino, Node internals, GC, idle) and the top functions by self time, overall and in
 * Portico's own code, with their inclusive time. Used by bench/profile.ts; also runs alone:
 *   node --import tsx bench/profile-summary.ts FILE.cpuprofile [--top 25]
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
  readonly columnNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

export interface FunctionCost {
  readonly name: string;
  readonly where: string;
  readonly area: string;
  readonly selfMs: number;
  readonly totalMs: number;
}

export interface ProfileSummary {
  readonly wallMs: number;
  /** Sampled time, idle excluded. */
  readonly busyMs: number;
  readonly areas: readonly { area: string; selfMs: number }[];
  readonly functions: readonly FunctionCost[];
}

/** Which part of the process a frame belongs to. */
export function areaOf(url: string, name: string): string {
  if (url === '')
    return name === '(garbage collector)'
      ? 'GC'
      : name === '(idle)'
        ? 'idle'
        : name === '(program)'
          ? 'program (native, unattributed)'
          : 'native';
  if (url.startsWith('node:')) return 'node internals';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg?.[1] !== undefined) return pkg[1];
  if (/\/(dist\/)?src\//.test(url)) return 'portico';
  return 'other';
}

function shortWhere(url: string, line: number): string {
  const path = url.replace(/^file:\/\//, '');
  const m = /(node_modules\/.+|(?:dist\/)?src\/.+)$/.exec(path);
  return `${m?.[1] ?? path}:${line + 1}`;
}

/** Aggregates self and inclusive time per function (name + location). */
export function summariseProfile(profile: CpuProfile): ProfileSummary {
  const byId = new Map<number, ProfileNode>();
  for (const n of profile.nodes) byId.set(n.id, n);
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const keyOf = (n: ProfileNode) =>
    `${n.callFrame.functionName || '(anonymous)'}|${n.callFrame.url}|${n.callFrame.lineNumber}`;
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const frames = new Map<string, CallFrame>();
  const areas = new Map<string, number>();

  // Inclusive time: a node's subtree, counted once per function even under recursion.
  const subtree = new Map<number, number>();
  const order: number[] = [];
  const root = profile.nodes[0];
  const stack: number[] = root === undefined ? [] : [root.id];
  while (stack.length > 0) {
    const id = stack.pop()!;
    order.push(id);
    for (const c of byId.get(id)?.children ?? []) stack.push(c);
  }
  for (let i = order.length - 1; i >= 0; i--) {
    const id = order[i]!;
    let sum = selfUs.get(id) ?? 0;
    for (const c of byId.get(id)?.children ?? []) sum += subtree.get(c) ?? 0;
    subtree.set(id, sum);
  }
  const walk = (id: number, active: Set<string>) => {
    const n = byId.get(id);
    if (n === undefined) return;
    const key = keyOf(n);
    frames.set(key, n.callFrame);
    self.set(key, (self.get(key) ?? 0) + (selfUs.get(id) ?? 0));
    const area = areaOf(n.callFrame.url, n.callFrame.functionName);
    areas.set(area, (areas.get(area) ?? 0) + (selfUs.get(id) ?? 0));
    const fresh = !active.has(key);
    if (fresh) {
      total.set(key, (total.get(key) ?? 0) + (subtree.get(id) ?? 0));
      active.add(key);
    }
    for (const c of n.children ?? []) walk(c, active);
    if (fresh) active.delete(key);
  };
  if (root !== undefined) walk(root.id, new Set());

  const functions: FunctionCost[] = [...self.entries()].map(([key, us]) => {
    const f = frames.get(key)!;
    return {
      name: f.functionName || '(anonymous)',
      where: f.url === '' ? '' : shortWhere(f.url, f.lineNumber),
      area: areaOf(f.url, f.functionName),
      selfMs: us / 1000,
      totalMs: (total.get(key) ?? us) / 1000,
    };
  });
  functions.sort((a, b) => b.selfMs - a.selfMs);
  const idle = (areas.get('idle') ?? 0) / 1000;
  const sampled = [...areas.values()].reduce((a, b) => a + b, 0) / 1000;
  return {
    wallMs: (profile.endTime - profile.startTime) / 1000,
    busyMs: sampled - idle,
    areas: [...areas.entries()].map(([area, us]) => ({ area, selfMs: us / 1000 })).sort((a, b) => b.selfMs - a.selfMs),
    functions,
  };
}

const pct = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : 'n/a');

/** Markdown tables: areas, top functions overall, top functions in Portico's code. */
/**
 * With `requests` (served while profiling), the area table also shows microseconds per request: the
 * figure to compare between two processes, whose busy times differ.
 */
export function formatSummary(s: ProfileSummary, top = 25, requests?: number): string {
  const perRequest = (ms: number) => (requests === undefined ? '' : ` ${((ms * 1000) / requests).toFixed(1)} |`);
  const lines = [
    `profile: ${(s.wallMs / 1000).toFixed(1)} s wall, ${(s.busyMs / 1000).toFixed(1)} s busy (not idle)` +
      (requests === undefined ? '' : `, ${requests} requests`),
    '',
    `| area | self ms | % of busy |${requests === undefined ? '' : ' µs / request |'}`,
    `|---|---:|---:|${requests === undefined ? '' : '---:|'}`,
  ];
  for (const a of s.areas)
    if (a.area !== 'idle')
      lines.push(`| ${a.area} | ${a.selfMs.toFixed(0)} | ${pct(a.selfMs, s.busyMs)} |${perRequest(a.selfMs)}`);
  if (requests !== undefined) lines.push(`| all busy time | ${s.busyMs.toFixed(0)} | 100% |${perRequest(s.busyMs)}`);
  const fnTable = (title: string, list: readonly FunctionCost[]) => {
    lines.push(
      '',
      `${title}`,
      '',
      '| function | where | area | self ms | self % | total % |',
      '|---|---|---|---:|---:|---:|',
    );
    for (const f of list.slice(0, top))
      lines.push(
        `| ${f.name} | ${f.where} | ${f.area} | ${f.selfMs.toFixed(1)} | ${pct(f.selfMs, s.busyMs)} | ${pct(f.totalMs, s.busyMs)} |`,
      );
  };
  fnTable(
    `top ${top} functions by self time (all code)`,
    s.functions.filter((f) => f.area !== 'idle'),
  );
  fnTable(
    `top ${top} functions by self time in Portico's code`,
    s.functions.filter((f) => f.area === 'portico'),
  );
  return lines.join('\n');
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const file = process.argv[2];
  if (file === undefined) {
    process.stderr.write('usage: node --import tsx bench/profile-summary.ts FILE.cpuprofile [--top N]\n');
    process.exit(2);
  }
  const topIndex = process.argv.indexOf('--top');
  const top = topIndex > 0 ? Number(process.argv[topIndex + 1] ?? 25) : 25;
  process.stdout.write(
    formatSummary(summariseProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile), top) + '\n',
  );
}
