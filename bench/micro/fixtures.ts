/** Compiled configurations shared by the microbenchmarks (built once, as a config load and its pipelines would). */
import { loadConfigText } from '../../src/config/load.js';
import { compileRoutes } from '../../src/pipeline/compile-route.js';
import type { PipelineConfig } from '../../src/pipeline/types.js';

/** Compiles YAML or throws with the problems (a bench fixture that does not load is a bug). */
export function compile(yaml: string): PipelineConfig {
  const loaded = loadConfigText(yaml, 'micro-bench.yaml', {});
  if (!loaded.ok) throw new Error(`micro bench config: ${JSON.stringify(loaded.problems)}`);
  return compileRoutes(loaded.config);
}

const RESOURCES = [
  'users',
  'orders',
  'products',
  'invoices',
  'carts',
  'reviews',
  'shipments',
  'payments',
  'coupons',
  'stores',
];

/**
 * 50 routes shaped like a real API: per resource a list, an item, a nested list, a create and an
 * update (10 resources x 5), half of them dynamic.
 */
export function fiftyRoutesYaml(): string {
  const lines = ['routes:'];
  const route = (method: string, route: string, path: string) =>
    lines.push(
      `  - method: ${method}`,
      `    route: "${route}"`,
      '    service: 127.0.0.1:9',
      `    path: "${path}"`,
      '    public: true',
    );
  for (const r of RESOURCES) {
    route('GET', `/${r}`, `/v1/${r}`);
    route('GET', `/${r}/{id}`, `/v1/${r}/{id}`);
    route('GET', `/${r}/{id}/history/{page}`, `/v1/${r}/{id}/history?page={page}`);
    route('POST', `/${r}`, `/v1/${r}`);
    route('PUT', `/${r}/{id}`, `/v1/${r}/{id}`);
  }
  return lines.join('\n') + '\n';
}
