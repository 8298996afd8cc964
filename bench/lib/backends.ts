/**
 * Which backend each scenario's candidates proxy to: nginx (bench/lib/nginx.ts) for the scenarios
 * it can answer when it is installed, else the Node backend (bench/backend.ts), with a warning.
 * Both share the load core with the load generator. A Node backend costs that core several times
 * what nginx does, so with it the load side can become the limit of every candidate and squeeze
 * their ratios toward 1; the results say so through "backend direct / floor" (report.ts).
 */
import { resolve } from 'node:path';
import { ROOT, startProcess, transpileEntry, type Pinning, type Started } from './processes.js';
import { findNginx, nginxServes, nginxVersion, startNginxBackend } from './nginx.js';
import type { BenchScenario } from './scenarios.js';

export interface BenchBackends {
  /** The backend a scenario's candidates call. */
  forScenario(s: BenchScenario): Started;
  /** One line for the results header. */
  readonly description: string;
  /** Warnings for the results (also printed when the backends start). */
  readonly notes: readonly string[];
  stop(): Promise<void>;
}

/** Starts the backends the scenarios need; `useNginx: false` forces the Node backend. */
export async function startBenchBackends(
  scenarios: readonly BenchScenario[],
  pinning: Pinning | undefined,
  options: { useNginx?: boolean; log?: (line: string) => void } = {},
): Promise<BenchBackends> {
  const log = options.log ?? ((line: string) => process.stderr.write(line + '\n'));
  const notes: string[] = [];
  const binary = options.useNginx === false ? undefined : findNginx();
  const nginxScenarios = binary === undefined ? [] : scenarios.filter(nginxServes);
  const nodeScenarios = scenarios.filter((s) => !nginxScenarios.includes(s));
  const started: Started[] = [];
  const stop = async () => {
    await Promise.all(started.map((b) => b.stop().catch(() => undefined)));
  };
  try {
    let nginx: Started | undefined;
    if (binary !== undefined && nginxScenarios.length > 0) {
      try {
        nginx = await startNginxBackend(binary, nginxScenarios, pinning?.loadCore);
        started.push(nginx);
      } catch (err) {
        const why = `nginx did not start (${(err as Error).message.split('\n')[0]}): the Node backend serves every scenario`;
        log(`warning: ${why}`);
        notes.push(why);
        nodeScenarios.push(...nginxScenarios.splice(0));
      }
    } else if (options.useNginx === false) {
      notes.push(
        'the Node backend (bench/backend.ts) by request, though nginx may be installed: see "backend direct / floor"',
      );
    } else if (binary === undefined) {
      const why =
        'nginx is not installed (apt-get install nginx): the backend is the Node one (bench/backend.ts), which may make the load core the limit of every candidate; see "backend direct / floor"';
      log(`warning: ${why}`);
      notes.push(why);
    }
    let node: Started | undefined;
    if (nodeScenarios.length > 0) {
      node = await startProcess({
        name: 'node backend',
        command: process.execPath,
        args: [transpileEntry(resolve(ROOT, 'bench/backend.ts'))],
        core: pinning?.loadCore,
        ready: { kind: 'stdout-line' },
      });
      started.push(node);
    }
    const describe = (list: readonly BenchScenario[]) => list.map((s) => s.id).join(', ');
    const parts = [
      ...(nginx !== undefined && binary !== undefined
        ? [`${nginxVersion(binary)} (1 worker, keep-alive, static answers) for ${describe(nginxScenarios)}`]
        : []),
      ...(node !== undefined ? [`Node (bench/backend.ts) for ${describe(nodeScenarios)}`] : []),
    ];
    return {
      forScenario(s) {
        const b = nginxScenarios.includes(s) ? nginx : node;
        if (b === undefined) throw new Error(`no backend started for scenario ${s.id}`);
        return b;
      },
      description: `${parts.join('; ')}${pinning === undefined ? '' : `; on core ${pinning.loadCore} with the load generator`}`,
      notes,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
