/** What a results file must say about where it was measured (the machine and Node version). */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release } from 'node:os';
import { ROOT } from './processes.js';

export interface Machine {
  readonly nproc: number;
  readonly cpuModel: string;
  readonly node: string;
  readonly kernel: string;
  readonly commit: string;
  /** True when the working tree differs from the commit (figures are of uncommitted code). */
  readonly dirty: boolean;
}

function cpuModel(): string {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m?.[1] !== undefined) return m[1].trim();
  } catch {
    // not Linux
  }
  return cpus()[0]?.model ?? 'unknown';
}

export function describeMachine(): Machine {
  const git = (args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  const commit = git(['rev-parse', '--short', 'HEAD']).stdout.trim() || 'nocommit';
  const dirty = git(['status', '--porcelain', '--untracked-files=no']).stdout.trim() !== '';
  return {
    nproc: availableParallelism(),
    cpuModel: cpuModel(),
    node: process.version,
    kernel: release(),
    commit,
    dirty,
  };
}

/** 1-minute load average, to show when other work shared the machine. */
export const load1 = (): number => loadavg()[0] ?? 0;
