/**
 * The worker thread of ./load-off-thread.ts: for each `load` it is sent, reads, parses and
 * validates the configuration file and posts the result back as plain data, the routes a few
 * hundred at a time, each when the main thread asks for `more`, so that the main thread, which
 * goes on serving requests, reads each message back in a short stretch.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { readConfigText, parseConfigText } from './parse.js';
import { validateConfig } from './validate.js';
import { writtenTelemetryKeys } from './otel-env.js';
import type { RouteConfig } from './schema.js';
import { routeSource } from './route-key.js';
import { headKeyOf } from './compile-memo.js';
import { ROUTES_PER_MESSAGE, type LoadMessage, type ToLoadWorker } from './load-messages.js';

/**
 * This thread's nice value. Its parse and validation are hundreds of ms of CPU, and where it shares
 * a core with the main thread (a gateway pinned to one core, or more busy threads than cores) every
 * request arriving meanwhile waited for the scheduler to take the core back. At 10 the main thread
 * gets about nine tenths of a shared core; 19 (one part in 70) would starve a reload on a
 * saturated core, where the reload is to be served too.
 */
const WORKER_NICE = 10;

lowerPriority();

/**
 * Lowers this thread's priority, never raises it, and leaves the process's alone: on Linux a nice
 * value is per thread, set by its tid.
 */
function lowerPriority(): void {
  if (process.platform !== 'linux') return;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0 && getPriority(tid) < WORKER_NICE) setPriority(tid, WORKER_NICE);
  } catch {
    // No /proc, or a sandbox that refuses it: the worker runs at the process's priority.
  }
}

const port = parentPort!;
const post = (message: LoadMessage) => port.postMessage(message);
/** The routes of the last load still to send, and where the next message starts. */
let routes: readonly RouteConfig[] = [];
let next = 0;

port.on('message', (message: ToLoadWorker) => {
  if (message.kind === 'load') return load(message.file, message.env);
  // One message of routes per request: a port hands every message waiting on it over in one go,
  // so routes posted all at once would be read back in one long stretch.
  if (next >= routes.length) {
    routes = [];
    return post({ kind: 'end' });
  }
  // As keys: the main thread compiles again only the routes whose key changed (./compile-memo.ts).
  post({ kind: 'routes', routes: routes.slice(next, (next += ROUTES_PER_MESSAGE)).map(routeSource) });
});

function load(file: string, env: NodeJS.ProcessEnv): void {
  const text = readConfigText(file);
  const parsed = typeof text === 'string' ? parseConfigText(text, file, env) : text;
  const v = validateConfig(parsed);
  if (!v.ok) return post({ kind: 'problems', problems: v.problems });
  ({ routes } = v.config);
  next = 0;
  post({
    kind: 'head',
    file: { ...v.config, routes: [] },
    headKey: headKeyOf(v.config),
    notices: v.notices,
    telemetryKeys: [...writtenTelemetryKeys(parsed.value)],
    // Only plugin options are located after validation (./load.ts withTracing), from this text.
    text: (v.config.plugins ?? []).length > 0 && typeof text === 'string' ? text : undefined,
  });
}
