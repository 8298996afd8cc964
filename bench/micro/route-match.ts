/**
 * Route matching: createRouteTable/match (src/router/route-table.ts) on 50 routes, for a static
 * path, a one-parameter path, a two-parameter path, and a miss (404) and a wrong method (405),
 * which take the slower "which methods would fit" branch.
 * Standalone: `node --import tsx bench/micro/route-match.ts`.
 */
import { createRouteTable, type RouteEntry } from '../../src/router/route-table.js';
import { compile, fiftyRoutesYaml } from './fixtures.js';
import { isMain, measure, runStandalone, type MicroSuite } from './measure.js';

export const suite: MicroSuite = {
  title: 'route matching (find-my-way, 50 routes)',
  run(budget) {
    const config = compile(fiftyRoutesYaml());
    if (config.routes.length !== 50) throw new Error(`expected 50 routes, got ${config.routes.length}`);
    const noop = async () => {};
    const table = createRouteTable(config.routes.map((route): RouteEntry => ({ route, run: noop })));
    const expect = (method: string, path: string, kind: string) => {
      const m = table.match(method, path);
      if (m.kind !== kind) throw new Error(`${method} ${path}: expected ${kind}, got ${m.kind}`);
    };
    expect('GET', '/api/stores', 'found');
    expect('GET', '/api/payments/8812', 'found');
    expect('GET', '/api/reviews/77/history/3', 'found');
    expect('GET', '/api/nothing/here', 'not-found');
    expect('DELETE', '/api/users/1', 'method-not-allowed');
    return [
      measure('GET static (/api/stores)', () => table.match('GET', '/api/stores'), budget),
      measure('GET 1 param (/api/payments/8812)', () => table.match('GET', '/api/payments/8812'), budget),
      measure(
        'GET 2 params (/api/reviews/77/history/3)',
        () => table.match('GET', '/api/reviews/77/history/3'),
        budget,
      ),
      measure('miss, 404 (/api/nothing/here)', () => table.match('GET', '/api/nothing/here'), budget / 2),
      measure('wrong method, 405 (DELETE /api/users/1)', () => table.match('DELETE', '/api/users/1'), budget / 2),
    ];
  },
};

if (isMain(import.meta.url)) await runStandalone(suite);
