/**
 * What the load benchmark sends. Built in: small GET (~400 B), 20 KB GET, 4 KB POST.
 *
 * Hook for more scenarios (the mapping scenario lives in bench/mapping.ts, by the mapping work):
 * a bench file may `export const benchScenarios: BenchScenario[]`; bench/run.ts imports it when the
 * file exists and exports that name, and runs those scenarios like the built-in ones
 * (`npm run bench -- --scenarios mapping`). Such a file must not start anything at import time
 * (guard its own main). The backend (bench/backend.ts) serves `/items?n=N` (N items with `userId`)
 * `/users/{id}` and `/comments?postId=X` for mapping scenarios, each slowed by a `/delay/MS` prefix;
 * `service` in a mapping rule may be written `BACKEND`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface BenchMappingRule {
  readonly path: string;
  /** `BACKEND` (the bench backend) or a host:port. */
  readonly service: string;
  readonly tag: string;
  readonly removeKeyMapping?: boolean;
}

export interface BenchScenario {
  /** Short id used by `--scenarios` and in results (`small`). */
  readonly id: string;
  /** Table heading (`small GET (~400 B)`). */
  readonly title: string;
  readonly method: 'GET' | 'POST';
  /** Backend path (with query if any). Proxies are called at `/api` + path; the backend directly at path. */
  readonly path: string;
  readonly body?: { readonly contentType: string; readonly data: string };
  /** Portico's route for this scenario; default `route` = `path` = the scenario path. */
  readonly portico?: { readonly route: string; readonly path: string; readonly mapping?: readonly BenchMappingRule[] };
  /** Candidate ids this scenario is meaningful for (default: all but the opt-in ones). */
  readonly candidates?: readonly string[];
  /** Why a candidate left out of `candidates` is: its row shows n/a with this note (else no row). */
  readonly notApplicable?: Readonly<Record<string, string>>;
}

/** A JSON document of exactly `size` bytes. */
export function jsonOfSize(size: number): string {
  const head = '{"ok":true,"data":"';
  const tail = '"}';
  return head + 'x'.repeat(Math.max(0, size - head.length - tail.length)) + tail;
}

export const BUILT_IN_SCENARIOS: readonly BenchScenario[] = [
  { id: 'small', title: 'small GET (~400 B)', method: 'GET', path: '/small' },
  { id: 'large', title: '20 KB GET', method: 'GET', path: '/large' },
  {
    id: 'post',
    title: '4 KB POST (JSON)',
    method: 'POST',
    path: '/echo',
    body: { contentType: 'application/json', data: jsonOfSize(4096) },
  },
];

/** Portico route/path of a scenario, and the path clients call on any `/api`-prefixed proxy. */
export function porticoRoute(s: BenchScenario): { route: string; path: string; mapping?: readonly BenchMappingRule[] } {
  if (s.portico !== undefined) return s.portico;
  return { route: s.path.split('?')[0] ?? s.path, path: s.path };
}

/** Loads `benchScenarios` from the hook files that exist; returns notes for files that do not fit. */
export async function hookScenarios(benchDir: string): Promise<{ scenarios: BenchScenario[]; notes: string[] }> {
  const scenarios: BenchScenario[] = [];
  const notes: string[] = [];
  for (const name of ['mapping.ts']) {
    const file = resolve(benchDir, name);
    if (!existsSync(file)) {
      notes.push(`bench/${name} absent: its scenario is not run`);
      continue;
    }
    if (!/export\s+(const|let)\s+benchScenarios\b/.test(readFileSync(file, 'utf8'))) {
      notes.push(`bench/${name} exports no benchScenarios: run it on its own (node --import tsx bench/${name})`);
      continue;
    }
    try {
      const mod = (await import(pathToFileURL(file).href)) as { benchScenarios?: unknown };
      if (Array.isArray(mod.benchScenarios)) scenarios.push(...(mod.benchScenarios as BenchScenario[]));
    } catch (err) {
      notes.push(`bench/${name} failed to load: ${(err as Error).message}`);
    }
  }
  return { scenarios, notes };
}
