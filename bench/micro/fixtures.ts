/** Compiled configurations shared by the microbenchmarks (built once, as a config load and its pipelines would). */
import { loadConfigText } from '../../src/config/load.js';
import { compileRoutes } from '../../src/pipeline/compile-route.js';
import type { PipelineConfig } from '../../src/pipeline/types.js';
import type { RouteEntry, RouteTable } from '../../src/router/route-table.js';

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

/** The router builder a lookup table of rows is made with (one build or another of src/router). */
export type CreateRouteTable = (entries: readonly RouteEntry[]) => RouteTable;

/**
 * The lookups of route-match.ts, by label, on the tables `create` builds from the three fixtures
 * above: the 50-route rows, the 1,000 exact routes' baseline, and each kind among 1,000 mixed.
 */
export function lookupRows(create: CreateRouteTable): [string, () => unknown][] {
  const noop = async () => {};
  const [fifty, exact, mixed] = [fiftyRoutesYaml(), thousandExactRoutesYaml(), thousandMixedRoutesYaml()].map((yaml) =>
    create(compile(yaml).routes.map((route): RouteEntry => ({ route, run: noop }))),
  );
  const host = 't117.example.com:8080';
  const wild = 'a.w120.example.com';
  return [
    ['GET static', () => fifty!.match('GET', '/api/stores', undefined)],
    ['GET 1 param', () => fifty!.match('GET', '/api/payments/8812', undefined)],
    ['GET 2 params', () => fifty!.match('GET', '/api/reviews/77/history/3', undefined)],
    ['miss, 404', () => fifty!.match('GET', '/api/nothing/here', undefined)],
    ['wrong method, 405', () => fifty!.match('DELETE', '/api/users/1', undefined)],
    ['1,000 exact: GET exact', () => exact!.match('GET', '/api/r617/items', host)],
    ['1,000 mixed: GET exact', () => mixed!.match('GET', '/api/e117/items', host)],
    ['1,000 mixed: GET param', () => mixed!.match('GET', '/api/p117/items/42', host)],
    ['1,000 mixed: GET prefix', () => mixed!.match('GET', '/api/s117/css/site.css', host)],
    ['1,000 mixed: GET host', () => mixed!.match('GET', '/api/h117/items', host)],
    ['1,000 mixed: GET *.host', () => mixed!.match('GET', '/api/h120/items', wild)],
  ];
}
