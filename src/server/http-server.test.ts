import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { loadConfigText } from '../config/load.js';
import { compileRoutes } from '../pipeline/compile-route.js';
import { createRouteTable, type RouteEntry } from '../router/route-table.js';
import { createEventBus, type GatewayEvents } from '../observability/events.js';
import { createLogger } from '../observability/logger.js';
import { createTracer } from '../observability/trace-context.js';
import type { Step } from '../pipeline/types.js';
import { createRequestHandler } from './http-server.js';

/** A handler over one route whose pipeline is `run`, served on an ephemeral port. */
async function serve(run: Step): Promise<{
  server: Server;
  url: string;
  firstEnd: Promise<GatewayEvents['request:end']>;
  errors: { reqId?: string; route?: string; msg: string }[];
}> {
  const loaded = loadConfigText(
    'routes:\n  - { method: GET, route: /broken, service: "127.0.0.1:1", path: /b }\n',
    'unit.yaml',
    {},
  );
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  const entries: RouteEntry[] = compileRoutes(loaded.config).routes.map((route) => ({ route, run }));
  const table = createRouteTable(entries);
  const events = createEventBus();
  const firstEnd = new Promise<GatewayEvents['request:end']>((resolve) => events.on('request:end', resolve));
  const errors: { reqId?: string; route?: string; msg: string }[] = [];
  const logger = createLogger({
    level: 'error',
    destination: { write: (line: string) => void errors.push(JSON.parse(line)) },
  });
  const handler = createRequestHandler({
    current: () => table,
    events,
    logger,
    tracer: createTracer(),
    isDraining: () => false,
    inFlight: { count: 0 },
  });
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/broken`, firstEnd, errors };
}

describe('request handler, a pipeline that fails', () => {
  const cases: [string, Step][] = [
    [
      'throws before its first await',
      () => {
        throw new Error('sync bug');
      },
    ],
    ['rejects', () => Promise.reject(new Error('async bug'))],
  ];
  for (const [name, run] of cases) {
    it(`answers 500 GW_INTERNAL and logs the cause when it ${name}`, async () => {
      const { server, url, firstEnd, errors } = await serve(run);
      try {
        const res = await fetch(url, { headers: { 'x-request-id': 'req-1' } });
        const body = (await res.json()) as { error: string; success: boolean };
        assert.equal(res.status, 500);
        const end = await firstEnd;
        assert.equal(end.errorCode, 'GW_INTERNAL');
        assert.deepEqual(body, { error: 'Internal gateway error', success: false });
        assert.equal(errors.length, 1);
        assert.equal(errors[0]!.reqId, 'req-1');
        assert.equal(errors[0]!.msg, 'unhandled error in pipeline');
        // The server is still serving: a second request gets the same answer.
        assert.equal((await fetch(url)).status, 500);
      } finally {
        server.close();
      }
    });
  }
});
