/**
 * Open file descriptors of a process against its limit, from /proc (Linux): the scale benches
 * size their runs to what each process may hold, and name the process that ran out when a
 * connection fails. A process at its limit fails `accept` with EMFILE, and libuv then accepts and
 * closes the pending connections to keep the listener alive: the client sees a reset
 * (ECONNRESET), not EMFILE, so the bench has to look at the processes to say which one it was.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The soft RLIMIT_NOFILE of `pid` ("unlimited" as Infinity), or undefined without /proc. */
export function descriptorLimit(pid: number): number | undefined {
  try {
    const line = /^Max open files\s+(\S+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
    if (line === null) return undefined;
    return line[1] === 'unlimited' ? Infinity : Number(line[1]);
  } catch {
    return undefined;
  }
}

/** Descriptors `pid` has open now, or undefined when it is gone (or /proc is not there). */
export function descriptorsInUse(pid: number): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

/**
 * One line per process, `name pid: USED of LIMIT descriptors`, marked as out of descriptors when
 * within `near` of its limit: what a bench prints when connections fail. `near` is what the
 * failure itself may have freed by the time this runs (the failed connections of a batch).
 */
export function describeDescriptors(
  processes: readonly { readonly name: string; readonly pid: number }[],
  near: number,
): string {
  return processes
    .map(({ name, pid }) => {
      const used = descriptorsInUse(pid);
      const limit = descriptorLimit(pid);
      if (used === undefined || limit === undefined) return `${name} (pid ${pid}): gone`;
      const full =
        used >= limit - near
          ? `: out of descriptors (EMFILE: within ${near} of its limit, its accepts and connects fail)`
          : '';
      return `${name} (pid ${pid}): ${used} of ${limit} descriptors${full}`;
    })
    .join('\n');
}
