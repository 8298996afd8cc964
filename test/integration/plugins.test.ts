/**
 * Plugins on a real gateway (docs/plugins.md): every stage answers, edits and fails as documented,
 * over HTTP/1.1 and HTTP/2; a failing plugin never crashes the process and is logged with its
 * name and the request id; a reload loads changed plugin code without failing requests in flight.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { closedPort, json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { h2request } from '../support/http2.js';
import { adminRequest } from '../support/admin.js';
import type { StatusDocument } from '../../src/admin/types.js';

const FAULTY = resolve('test/fixtures/plugins/faulty.ts');
const API_KEY = resolve('examples/plugins/api-key.ts');
const REWRITE = resolve('examples/plugins/response-headers.ts');

const STAGES = ['onRequest', 'onAuthenticated', 'beforeUpstream', 'onResponse', 'onError'] as const;
const MODES = [
  { mode: 'throws', status: 500, code: 'GW_PLUGIN_FAILED', log: 'plugin failed' },
  { mode: 'rejects', status: 500, code: 'GW_PLUGIN_FAILED', log: 'plugin failed' },
  { mode: 'hangs', status: 504, code: 'GW_PLUGIN_TIMEOUT', log: 'plugin timed out' },
  { mode: 'rejects-late', status: 504, code: 'GW_PLUGIN_TIMEOUT', log: 'plugin timed out' },
  { mode: 'invalid', status: 500, code: 'GW_PLUGIN_FAILED', log: 'plugin failed' },
] as const;

const unhandled: unknown[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(reason));

describe('a plugin that throws, rejects, hangs or returns nonsense, at every stage', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend();
    const down = await closedPort();
    const entries = STAGES.flatMap((stage) =>
      MODES.map(
        ({ mode }) =>
          `  - { name: ${stage}-${mode}, module: ${FAULTY}, timeoutMs: 100, options: { stage: ${stage}, mode: ${mode} } }`,
      ),
    );
    // onError needs a gateway error to see: its routes call a closed port (502).
    const routes = STAGES.flatMap((stage) =>
      MODES.map(
        ({ mode }) =>
          `  - { method: GET, route: /f/${stage}/${mode}, service: ${stage === 'onError' ? `127.0.0.1:${down}` : backend.host}, path: /ok, plugins: [${stage}-${mode}] }`,
      ),
    );
    gw = await startGateway(`plugins:\n${entries.join('\n')}\nroutes:\n${routes.join('\n')}\n`);
  });
  after(() => closeAll(gw, backend));

  for (const stage of STAGES)
    for (const { mode, status, code, log } of MODES)
      it(`${stage} ${mode}: ${status} ${code}, logged with the plugin and the request id`, async () => {
        const res = await fetch(`${gw.url}/api/f/${stage}/${mode}`);
        assert.equal(res.status, status);
        assert.equal(res.headers.get('x-portico-error'), code);
        assert.equal(res.headers.get('content-type'), 'application/json');
        const body = (await res.json()) as { success: boolean; error: string };
        assert.equal(body.success, false);
        const requestId = res.headers.get('x-request-id');
        const line = gw.logs.find((l) => l.msg === log && l.reqId === requestId);
        assert.ok(line, `no "${log}" line for ${requestId}`);
        assert.equal(line.plugin, `${stage}-${mode}`);
        assert.equal(line.stage, stage);
      });

  it('a rejection after the time limit is logged, never unhandled, and the gateway keeps serving', async () => {
    const res = await fetch(`${gw.url}/api/f/onRequest/rejects-late`);
    assert.equal(res.status, 504);
    const requestId = res.headers.get('x-request-id');
    await waitForLog(gw, (l) => l.msg === 'plugin rejected after its timeout' && l.reqId === requestId);
    assert.deepEqual(unhandled, []);
    assert.equal((await fetch(`${gw.url}/api/f/onRequest/throws`)).status, 500);
  });
});

describe('what each stage may do', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let dir: string;
  before(async () => {
    backend = await startBackend((req, res) =>
      json(res, 200, { url: req.url }, { server: 'backend/1.0', 'x-powered-by': 'php' }),
    );
    dir = mkdtempSync(join(tmpdir(), 'portico-plugins-'));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    writeFileSync(
      join(dir, 'stages.ts'),
      `import { definePlugin } from '${resolve('src/index.ts')}';
export default definePlugin({
  async onRequest({ request }) {
    if (request.header('x-answer') === 'response')
      return new Response('teapot', { status: 418, headers: { 'x-from': 'plugin', 'set-cookie': 'a=1' } });
    if (request.header('x-answer') === 'error') return { error: 'GW_AUTH_FORBIDDEN', message: 'no entry' };
  },
  async beforeUpstream({ request, upstream }) {
    if (request.header('x-rewrite') !== undefined) upstream.path = '/rewritten?id=' + request.params.id;
    if (request.header('x-forbidden') !== undefined) upstream.setHeader('X-Forwarded-For', '6.6.6.6');
    upstream.setHeader('x-params', JSON.stringify(request.params));
  },
  async onResponse({ response }) {
    await new Promise((r) => setTimeout(r, 5));
    response.setHeader('x-status-seen', String(response.status));
  },
});
`,
    );
    gw = await startGateway(`
plugins:
  - { name: stages, module: ${join(dir, 'stages.ts')} }
  - { name: rewrite, module: ${REWRITE}, options: { set: { x-api-version: '2' }, remove: [server, x-powered-by] } }
  - { name: api-key, module: ${API_KEY}, options: { keys: { k0123456789abcdef: alice } } }
routes:
  - { method: GET, route: '/s/{id}', service: ${backend.host}, path: '/items/{id}', plugins: [stages] }
  - { method: GET, route: /rw, service: ${backend.host}, path: /rw, plugins: [rewrite] }
  - { method: GET, route: /down, service: 127.0.0.1:${await closedPort()}, path: /x, plugins: [rewrite] }
  - { method: GET, route: /key, service: ${backend.host}, path: /key, plugins: [api-key] }
  - { method: GET, route: /plain, service: ${backend.host}, path: /plain }
config:
  http2: { cleartext: true }
`);
  });
  after(() => closeAll(gw, backend));

  it('onRequest answers with a Response of its own: status, headers, cookies and body', async () => {
    const res = await fetch(`${gw.url}/api/s/1`, { headers: { 'x-answer': 'response' } });
    assert.equal(res.status, 418);
    assert.equal(res.headers.get('x-from'), 'plugin');
    assert.equal(res.headers.get('set-cookie'), 'a=1');
    assert.ok(res.headers.get('x-request-id'));
    assert.equal(await res.text(), 'teapot');
    assert.equal(backend.seen.length, 0);
  });

  it('onRequest answers with a gateway error and its own message', async () => {
    const res = await fetch(`${gw.url}/api/s/1`, { headers: { 'x-answer': 'error' } });
    assert.equal(res.status, 403);
    assert.equal(res.headers.get('x-portico-error'), 'GW_AUTH_FORBIDDEN');
    assert.deepEqual(await res.json(), { error: 'no entry', success: false });
  });

  it('beforeUpstream rewrites the path and sets headers; onResponse edits the head, async', async () => {
    const res = await fetch(`${gw.url}/api/s/7`, { headers: { 'x-rewrite': '1' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-status-seen'), '200');
    assert.deepEqual(await res.json(), { url: '/rewritten?id=7' });
    const seen = backend.seen.at(-1)!;
    assert.equal(seen.headers['x-params'], '{"id":"7"}');
  });

  it('beforeUpstream cannot set a header the gateway owns: 500, and the backend is not called', async () => {
    const before = backend.seen.length;
    const res = await fetch(`${gw.url}/api/s/1`, { headers: { 'x-forbidden': '1' } });
    assert.equal(res.status, 500);
    assert.equal(res.headers.get('x-portico-error'), 'GW_PLUGIN_FAILED');
    assert.equal(backend.seen.length, before);
  });

  it('the header rewrite example: response headers set and removed, a header for the backend', async () => {
    const res = await fetch(`${gw.url}/api/rw`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-api-version'), '2');
    assert.equal(res.headers.get('server'), null);
    assert.equal(res.headers.get('x-powered-by'), null);
    assert.equal(backend.seen.at(-1)!.headers['x-gateway-route'], 'GET /rw');
  });

  it('the header rewrite example: onError answers the gateway error in its own shape', async () => {
    const res = await fetch(`${gw.url}/api/down`);
    assert.equal(res.status, 502);
    assert.equal(res.headers.get('x-portico-error'), 'GW_UPSTREAM_UNREACHABLE');
    const body = (await res.json()) as { problem: string; requestId: string };
    assert.equal(body.problem, 'GW_UPSTREAM_UNREACHABLE');
    assert.equal(body.requestId, res.headers.get('x-request-id'));
  });

  it('the API-key example over HTTP/2: refused without a key, the consumer passed on with one', async () => {
    const session = connect(gw.url);
    try {
      const refused = await h2request(session, '/api/key');
      assert.equal(refused.status, 401);
      assert.equal(refused.headers['x-portico-error'], 'GW_AUTH_MISSING');
      const allowed = await h2request(session, '/api/key', { 'x-api-key': 'k0123456789abcdef' });
      assert.equal(allowed.status, 200);
      const seen = backend.seen.at(-1)!;
      assert.equal(seen.headers['x-consumer'], 'alice');
      assert.equal(seen.headers['x-api-key'], undefined);
    } finally {
      session.close();
    }
  });

  it('a route without plugins is untouched by its neighbours', async () => {
    const res = await fetch(`${gw.url}/api/plain`, { headers: { 'x-answer': 'response' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('server'), 'backend/1.0');
  });
});

describe('the status page and /metrics count each plugin', () => {
  it("counts a plugin's stages, failures and timeouts", async () => {
    const backend = await startBackend();
    const gw = await startGateway(`
plugins:
  - { name: fails, module: ${FAULTY}, timeoutMs: 100, options: { stage: onRequest, mode: throws } }
  - { name: hangs, module: ${FAULTY}, timeoutMs: 100, options: { stage: beforeUpstream, mode: hangs } }
  - { name: headers, module: ${REWRITE} }
routes:
  - { method: GET, route: /a, service: ${backend.host}, path: /a, plugins: [fails] }
  - { method: GET, route: /b, service: ${backend.host}, path: /b, plugins: [hangs] }
  - { method: GET, route: /c, service: ${backend.host}, path: /c, plugins: [headers] }
config:
  admin: { port: 0 }
  telemetry: { metricsPublic: true }
`);
    try {
      assert.equal((await fetch(`${gw.url}/api/a`)).status, 500);
      assert.equal((await fetch(`${gw.url}/api/b`)).status, 504);
      assert.equal((await fetch(`${gw.url}/api/c`)).status, 200);
      const status = (await (
        await adminRequest(gw.gateway.adminAddress()!.port, '/api/status')
      ).json()) as StatusDocument;
      const byName = new Map(status.plugins.map((p) => [p.name, p]));
      // onRequest threw; onError then saw the 500 and returned nothing: two runs, one failed.
      assert.deepEqual(
        { ...byName.get('fails'), avgMs: undefined },
        { name: 'fails', module: FAULTY, runs: 2, failed: 1, timeouts: 0, avgMs: undefined },
      );
      assert.equal(byName.get('hangs')!.timeouts, 1);
      // beforeUpstream and onResponse ran, each timed: onError did not (no error).
      assert.equal(byName.get('headers')!.runs, 2);
      assert.equal(typeof byName.get('headers')!.avgMs, 'number');
      const metrics = await (await fetch(`${gw.url}/metrics`)).text();
      assert.match(metrics, /portico_plugin_errors_total\{plugin="fails",stage="onRequest",kind="failed"\} 1/);
      assert.match(metrics, /portico_plugin_errors_total\{plugin="hangs",stage="beforeUpstream",kind="timeout"\} 1/);
      assert.match(metrics, /portico_plugin_duration_seconds_count\{plugin="headers",stage="onResponse"\} 1/);
    } finally {
      await closeAll(gw, backend);
    }
  });
});

describe('reload', () => {
  it('loads changed plugin code without a restart, and a request in flight finishes on the old code', async () => {
    let release: (() => void) | undefined;
    const backend = await startBackend(async (_req, res) => {
      if (release === undefined) await new Promise<void>((r) => (release = r));
      json(res, 200, { ok: true });
    });
    const dir = mkdtempSync(join(tmpdir(), 'portico-reload-'));
    // An ES module: CommonJS is cached by its path, whatever the URL's query (docs/plugins.md).
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    const module = join(dir, 'version.ts');
    const write = (v: number) =>
      writeFileSync(
        module,
        `import { definePlugin } from '${resolve('src/index.ts')}';
export default definePlugin({ onResponse({ response }) { response.setHeader('x-version', '${v}'); } });
`,
      );
    write(1);
    const yaml = `plugins:\n  - { name: v, module: ${module} }\nroutes:\n  - { method: GET, route: /v, service: ${backend.host}, path: /v, plugins: [v] }\n`;
    const gw = await startGateway(yaml);
    try {
      const inFlight = fetch(`${gw.url}/api/v`);
      await waitUntil(() => release !== undefined);
      write(2);
      await gw.reloadWithPlugins(yaml);
      release!();
      const old = await inFlight;
      assert.equal(old.status, 200);
      assert.equal(old.headers.get('x-version'), '1');
      const fresh = await fetch(`${gw.url}/api/v`);
      assert.equal(fresh.headers.get('x-version'), '2');
    } finally {
      await closeAll(gw, backend);
    }
  });
});

async function waitUntil(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setImmediate(r));
}

async function waitForLog(gw: TestGateway, match: (line: Record<string, unknown>) => boolean): Promise<void> {
  while (!gw.logs.some(match)) await new Promise((r) => setTimeout(r, 10));
}
