/**
 * npm and npx run a command through `sh -c`, and that shell does not pass signals on: on SIGTERM
 * it dies and leaves the gateway serving under init, and if npm itself is killed the shell
 * stays, still waiting. A gateway started by npm therefore watches its parent and its parent's
 * parent (the shell and npm): once either is gone, it stops exactly as on SIGTERM (drain, exit 0).
 */
import { readFileSync } from 'node:fs';

/** How often the parents are looked at: the bound on how late an orphaned gateway starts draining. */
export const PARENT_POLL_MS = 200;

/** True when npm (npm start, npm run, npx / npm exec) started this process. */
export function startedByNpm(env: NodeJS.ProcessEnv): boolean {
  return env.npm_lifecycle_event !== undefined && env.npm_lifecycle_event !== '';
}

/** The parent process id of `pid` from /proc (Linux); undefined where there is none to read. */
export function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so parse after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}

/** This process's parent and grandparent ids (the grandparent where the system tells it). */
function lineage(): readonly (number | undefined)[] {
  const parent = process.ppid;
  return [parent, parentOf(parent)];
}

export interface ParentWatchOptions {
  /** The ids to watch, looked up again on every poll (tests inject them). */
  readonly lineage?: () => readonly (number | undefined)[];
  readonly intervalMs?: number;
}

/**
 * Calls `stop('parent exited')` once the parent or grandparent that started this process has
 * gone. Returns a function that ends the watch. The timer never keeps the process up.
 */
export function stopWhenOrphaned(stop: (reason: string) => void, options: ParentWatchOptions = {}): () => void {
  const look = options.lineage ?? lineage;
  const first = look();
  let watching = true;
  const end = () => {
    watching = false;
    clearInterval(timer);
  };
  const timer = setInterval(() => {
    if (!watching) return;
    const now = look();
    if (first.every((id, i) => id === undefined || id === now[i])) return;
    end();
    stop('parent exited');
  }, options.intervalMs ?? PARENT_POLL_MS);
  timer.unref();
  return end;
}
