/**
 * The plugin layers' per-request work (docs/plugins.md "Performance"): what a route with plugins
 * does on each request beyond calling them. Their isolation (500/504) and every stage's effect
 * over real sockets are test/integration/plugins*.test.ts's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CompiledRoute, Exchange, Step } from '../pipeline/types.js';
import type { LoadedPlugin, Plugin } from '../plugins/types.js';
import { createEventBus } from '../observability/events.js';
import { createLogger } from '../observability/logger.js';
import { sendError } from '../response/send-error.js';
import { createExchange } from '../pipeline/exchange.js';
import { fakeRequest, fakeResponse } from '../../test/support/exchanges.js';
import { pluginHooksLayer, pluginStageLayer, type PluginLayerDeps } from './plugin.js';

const deps: PluginLayerDeps = {
  logger: createLogger({ level: 'silent' }),
  events: createEventBus(),
  clientIp: () => '10.0.0.7',
  dropHeaders: new Set(['x-internal']),
  targets: { targets: new Map(), refusal: 'not here' },
};

function loaded(name: string, plugin: Partial<Plugin>): LoadedPlugin {
  return { name, plugin: plugin as Plugin, options: { name }, timeoutMs: 1000, from: name };
}

/** What of a route the plugin stages read. */
const route = { id: 'GET /orders/{id}' } as CompiledRoute;
let requests = 0;

/** An exchange on a gateway response double: it has the error-hook slot the real ones have. */
function exchange(): { ex: Exchange; written: ReturnType<typeof fakeResponse>['written'] } {
  const { res, written } = fakeResponse();
  const req = fakeRequest({ host: 'gw', 'x-team': 'a' }, 'GET', '/orders/7?x=1');
  const slotted = Object.assign(res, { errorHook: undefined });
  const ex = createExchange(route, req, slotted, undefined, `rid-${++requests}`, { id: '7' }, 'x=1');
  return { ex, written };
}

test('a stage whose plugins return synchronously hands on the promise of the next step itself', async () => {
  const done = Promise.resolve();
  const next: Step = () => done;
  const step = pluginStageLayer(
    'onRequest',
    [loaded('a', { onRequest() {} }), loaded('b', { onRequest() {} })],
    deps,
  )(next);
  const { ex } = exchange();
  assert.equal(step(ex), done);
  await done;
});

test('every stage and every plugin of a request sees one request view', async () => {
  const seen: unknown[] = [];
  const record = (ctx: { request: unknown }) => void seen.push(ctx.request);
  const a = loaded('a', { onRequest: record, onAuthenticated: record, beforeUpstream: record, onResponse: record });
  const b = loaded('b', { onRequest: record });
  const end: Step = async (ex) => {
    assert.equal(ex.onResponseHead?.onResponseHead(200, {}), true);
  };
  const layers = [
    pluginHooksLayer([a], [], deps),
    pluginStageLayer('onRequest', [a, b], deps),
    pluginStageLayer('onAuthenticated', [a], deps),
    pluginStageLayer('beforeUpstream', [a], deps),
  ];
  const step = layers.reduceRight<Step>((next, layer) => layer(next), end);
  const first = exchange();
  await step(first.ex);
  assert.equal(seen.length, 5);
  assert.ok(seen.every((view) => view === seen[0]));
  const second = exchange();
  await step(second.ex);
  assert.equal(seen.length, 10);
  assert.notEqual(seen[5], seen[0], 'another request has another view');
  assert.equal((seen[5] as { path: string }).path, '/orders/7');
});

test('the hooks of a route with onResponse and onError cost one object per request, not closures', async () => {
  const onResponse = loaded('head', {
    onResponse(ctx) {
      ctx.response.setHeader('x-seen', ctx.request.requestId);
    },
  });
  const onError = loaded('err', {
    onError(ctx) {
      return new Response(`${ctx.error.code} ${ctx.request.requestId}`, { status: 418 });
    },
  });
  let hooked: Exchange | undefined;
  const step = pluginHooksLayer(
    [onResponse],
    [onError],
    deps,
  )(async (ex) => {
    hooked = ex;
  });
  const { ex, written } = exchange();
  await step(ex);
  assert.equal(hooked, ex);
  // One object per request carries both hooks: the response head's and the gateway errors'.
  const slot = (ex.res as unknown as { errorHook: unknown }).errorHook;
  assert.equal(slot, ex.onResponseHead);
  const headers: Record<string, string | string[]> = {};
  assert.equal(ex.onResponseHead?.onResponseHead(200, headers), true);
  assert.equal(headers['x-seen'], ex.requestId);
  sendError(ex.res, 'GW_UPSTREAM_UNREACHABLE');
  await new Promise<void>((resolve) => setImmediate(resolve));
  assert.equal(written.status, 418);
  assert.equal(written.body?.toString(), `GW_UPSTREAM_UNREACHABLE ${ex.requestId}`);
});

test('beforeUpstream edits through a destructured upstream reach the backend call, and are checked', async () => {
  const errors: unknown[] = [];
  const plugin = loaded('up', {
    beforeUpstream({ upstream }) {
      upstream.setHeader('X-Team', 'b');
      upstream.path = '/v2/orders/7';
      try {
        upstream.setHeader('x-internal', '1');
      } catch (err) {
        errors.push(err);
      }
    },
  });
  const step = pluginStageLayer('beforeUpstream', [plugin], deps)(async () => {});
  const { ex } = exchange();
  await step(ex);
  assert.deepEqual(ex.upstreamEdits, { path: '/v2/orders/7', headers: [['x-team', 'b']], target: undefined });
  assert.equal(errors.length, 1);
});

test('a beforeUpstream that does not touch upstream leaves the backend call as it was', async () => {
  const step = pluginStageLayer('beforeUpstream', [loaded('noop', { beforeUpstream() {} })], deps)(async () => {});
  const { ex } = exchange();
  await step(ex);
  assert.equal(ex.upstreamEdits, undefined);
});
