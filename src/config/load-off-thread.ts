/**
 * `loadConfig` for a reload, while requests are being served (docs/performance.md "Scale in
 * routes"): the file is read, parsed and validated on a worker thread (./load-worker.ts), whose
 * parse and validation are single stretches of tens to hundreds of ms that cannot be cut; the
 * main thread only reads back the validated file, a few hundred routes per message, and compiles
 * it in slices of a few ms (./sliced-work.ts). A reload is rare: one worker per reload, gone
 * when it has answered. Same result as `loadConfig`; when no worker can start, the same steps
 * run on this thread (`loadConfigInSteps`).
 */
import { Worker } from 'node:worker_threads';
import type { CompiledConfig, LoadResult } from './types.js';
import type { Problem } from './problems.js';
import type { GatewayFile, RouteConfig } from './schema.js';
import { parseConfigText, type ParsedConfig } from './parse.js';
import { compileInSlices, loadConfigInSteps, withTracing, type LoadedText } from './load.js';
import type { LoadMessage, LoadRequest } from './load-messages.js';

/** The worker, whose module is beside this one. */
function startWorker(workerData: LoadRequest): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./load-worker.js', import.meta.url), { workerData });
  // The sources run through tsx (tests, benches, a checkout): Node 20 does not carry a loader given
  // by --import into a worker, so the worker registers tsx before importing its module.
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./load-worker.ts', import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(bootstrap, { eval: true, workerData });
}

type Validated =
  | { readonly ok: true; readonly file: GatewayFile; readonly notices: readonly Problem[]; readonly text: LoadedText }
  | { readonly ok: false; readonly problems: readonly Problem[] };

/** Reads, validates (on a worker thread) and compiles (here, in slices) `file`. */
export async function loadConfigOffThread(file: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadResult> {
  let validated: Validated;
  try {
    validated = await validateOnWorker(file, env);
  } catch {
    // No worker (a thread limit, a loader that does not reach workers): the same work, here.
    return loadConfigInSteps(file, env);
  }
  if (!validated.ok) return validated;
  const config: CompiledConfig = await compileInSlices(validated.file, file);
  return { ok: true, config: withTracing(config, validated.text, env), notices: validated.notices };
}

/** The worker's answer; rejects when the worker failed before answering. */
function validateOnWorker(file: string, env: NodeJS.ProcessEnv): Promise<Validated> {
  const request: LoadRequest = { file, env: { ...env } };
  return new Promise((resolve, reject) => {
    const worker = startWorker(request);
    let head: Extract<LoadMessage, { kind: 'head' }> | undefined;
    const routes: RouteConfig[] = [];
    worker.on('message', (message: LoadMessage) => {
      switch (message.kind) {
        case 'problems':
          resolve({ ok: false, problems: message.problems });
          break;
        case 'head':
          head = message;
          worker.postMessage('more');
          break;
        case 'routes':
          for (const route of message.routes) routes.push(route);
          worker.postMessage('more');
          break;
        case 'end':
          void worker.terminate();
          resolve({
            ok: true,
            file: { ...head!.file, routes },
            notices: head!.notices,
            text: locatedLater(head!.text, file, env, new Set(head!.telemetryKeys)),
          });
      }
    });
    // Either after an answer (then nothing changes) or instead of one.
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the configuration worker exited (${code}) without an answer`)));
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
