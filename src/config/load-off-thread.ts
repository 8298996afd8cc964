/**
 * `loadConfig` for a reload, while requests are being served (docs/performance.md "Scale in
 * routes"): the file is read, parsed and validated on a worker thread (./load-worker.ts), whose
 * parse and validation are single stretches of tens to hundreds of ms that cannot be cut; the
 * main thread only reads back the validated file, a few hundred routes per message, and compiles
 * it in slices of about a ms (./sliced-work.ts). The worker is started by the first reload and
 * kept a minute after each (`KEEP_WARM_MS`). Same result as `loadConfig`; when no worker can
 * start, the same steps run on this thread (`loadConfigInSteps`).
 */
import { Worker } from 'node:worker_threads';
import type { CompiledConfig, LoadResult } from './types.js';
import type { Problem } from './problems.js';
import type { GatewayFile } from './schema.js';
import type { RouteSource } from './route-key.js';
import { parseConfigText, type ParsedConfig } from './parse.js';
import { compileInSlices, loadConfigInSteps, withTracing, type LoadedText } from './load.js';
import type { LoadMessage, ToLoadWorker } from './load-messages.js';

type Validated =
  | {
      readonly ok: true;
      /** The file without its routes, which are `sources`. */
      readonly file: GatewayFile;
      readonly sources: readonly RouteSource[];
      readonly headKey: string;
      readonly notices: readonly Problem[];
      readonly text: LoadedText;
    }
  | { readonly ok: false; readonly problems: readonly Problem[] };

/**
 * Reads, validates (on a worker thread) and compiles (here, in slices) `file`, keeping what of
 * `previous` (the configuration served) it did not change (./compile-memo.ts).
 */
export async function loadConfigOffThread(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
  previous?: CompiledConfig,
): Promise<LoadResult> {
  let validated: Validated;
  try {
    validated = await validateOnWorker(file, env);
  } catch {
    // No worker (a thread limit, a loader that does not reach workers): the same work, here.
    return loadConfigInSteps(file, env, previous);
  }
  if (!validated.ok) return validated;
  const { sources, headKey } = validated;
  const config: CompiledConfig = await compileInSlices(validated.file, file, { sources, headKey, previous });
  return { ok: true, config: withTracing(config, validated.text, env), notices: validated.notices };
}

/**
 * How long a worker is kept after a load, for the next: starting one loads the modules of
 * parsing and validation anew (hundreds of ms), and reloads come in bursts (an editor's saves,
 * a deployment's SIGHUPs). It holds no handle that keeps the process alive.
 */
const KEEP_WARM_MS = 60_000;

/** The worker kept after its last load, and the timer that ends it. */
let warm: { readonly worker: Worker; timer?: NodeJS.Timeout } | undefined;
/** One load at a time on the worker: the loads already asked for. */
let queue: Promise<unknown> = Promise.resolve();

/** The worker, whose module is beside this one. */
function startWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./load-worker.js', import.meta.url));
  // The sources run through tsx (tests, benches, a checkout): Node 20 does not carry a loader given
  // by --import into a worker, so the worker registers tsx before importing its module.
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./load-worker.ts', import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(bootstrap, { eval: true });
}

/** The worker's answer; rejects when the worker failed before answering. */
function validateOnWorker(file: string, env: NodeJS.ProcessEnv): Promise<Validated> {
  const asked = queue.then(() => askWorker(file, env));
  queue = asked.catch(() => {});
  return asked;
}

function askWorker(file: string, env: NodeJS.ProcessEnv): Promise<Validated> {
  const kept = (warm ??= { worker: startWorker() });
  const { worker } = kept;
  clearTimeout(kept.timer);
  worker.ref();
  return new Promise((resolve, reject) => {
    let head: Extract<LoadMessage, { kind: 'head' }> | undefined;
    const routes: RouteSource[] = [];
    const settle = (answer: Validated | Error) => {
      worker.off('message', onMessage);
      worker.off('error', settle);
      worker.off('exit', onExit);
      if (answer instanceof Error) {
        if (warm === kept) warm = undefined;
        void worker.terminate();
        return reject(answer);
      }
      worker.unref();
      kept.timer = setTimeout(() => {
        if (warm === kept) warm = undefined;
        void worker.terminate();
      }, KEEP_WARM_MS).unref();
      resolve(answer);
    };
    const onExit = (code: number) => settle(new Error(`the configuration worker exited (${code}) without an answer`));
    const more = () => worker.postMessage({ kind: 'more' } satisfies ToLoadWorker);
    const onMessage = (message: LoadMessage) => {
      switch (message.kind) {
        case 'problems':
          return settle({ ok: false, problems: message.problems });
        case 'head':
          head = message;
          return more();
        case 'routes':
          for (const route of message.routes) routes.push(route);
          return more();
        case 'end':
          return settle({
            ok: true,
            file: head!.file,
            sources: routes,
            headKey: head!.headKey,
            notices: head!.notices,
            text: locatedLater(head!.text, file, env, new Set(head!.telemetryKeys)),
          });
      }
    };
    worker.on('message', onMessage);
    worker.once('error', settle);
    worker.once('exit', onExit);
    worker.postMessage({ kind: 'load', file, env: { ...env } } satisfies ToLoadWorker);
  });
}

/**
 * Positions in the file for the plugin options checked after the load: found by parsing the text
 * the worker read again, only if one is asked for.
 */
function locatedLater(
  text: string | undefined,
  file: string,
  env: NodeJS.ProcessEnv,
  telemetryKeys: ReadonlySet<string>,
): LoadedText {
  let parsed: ParsedConfig | undefined;
  const reparsed = () => (parsed ??= parseConfigText(text ?? '', file, env));
  return {
    locate: (path) => reparsed().locate(path),
    locateKey: (path, key) => reparsed().locateKey(path, key),
    telemetryKeys,
  };
}
