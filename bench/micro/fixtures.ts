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

/** One route in the fixtures' YAML; `hosts` written only when given. */
function routeLines(method: string, route: string, path: string, hosts?: string): string[] {
  return [
    `  - method: ${method}`,
    `    route: "${route}"`,
    '    service: 127.0.0.1:9',
    `    path: "${path}"`,
    ...(hosts === undefined ? [] : [`    hosts: [${hosts}]`]),
    '    public: true',
  ];
}

/** 1,000 exact routes (`/r0/items` ... `/r999/items`): the baseline of the mixed table below. */
export function thousandExactRoutesYaml(): string {
  const lines = ['routes:'];
  for (let i = 0; i < 1000; i++) lines.push(...routeLines('GET', `/r${i}/items`, `/v1/r${i}/items`));
  return lines.join('\n') + '\n';
}

/**
 * 1,000 routes mixing the four kinds, 250 each: exact (`/e{i}/items`), parameter
 * (`/p{i}/items/{id}`), prefix (`/s{i}/*`), and exact paths limited to a host (`/h{i}/items` on
 * `t{i}.example.com`, every tenth on `*.w{i}.example.com` instead).
 */
export function thousandMixedRoutesYaml(): string {
  const lines = ['routes:'];
  for (let i = 0; i < 250; i++) {
    lines.push(...routeLines('GET', `/e${i}/items`, `/v1/e${i}/items`));
    lines.push(...routeLines('GET', `/p${i}/items/{id}`, `/v1/p${i}/items/{id}`));
    lines.push(...routeLines('GET', `/s${i}/*`, `/v1/s${i}/*`));
    const host = i % 10 === 0 ? `"*.w${i}.example.com"` : `t${i}.example.com`;
    lines.push(...routeLines('GET', `/h${i}/items`, `/v1/h${i}/items`, host));
  }
  return lines.join('\n') + '\n';
}
