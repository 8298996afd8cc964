/**
 * Mirroring (docs/routing.md "Mirroring") through the real gateway to real backends: the mirror
 * gets a copy of the sampled requests (method, path, body, request id, its own Host), exactly the
 * share asked for; bodies past maxBodyBytes are not copied; streamed bodies are copied as they
 * pass; the client's answer is the same, and as fast, when the mirror fails, hangs or is down;
 * copies past maxInFlight are dropped; a copy goes out only once the client has its answer;
 * everything is counted in /metrics. HTTP/1.1 and HTTP/2.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type ClientHttp2Session } from 'node:http2';
import { Readable } from 'node:stream';
import type { ServerResponse } from 'node:http';
import { request } from 'undici';
import { closedPort, json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { h2request } from '../support/http2.js';
import { waitFor } from '../support/wait-for.js';
import { closeAll } from '../support/close-all.js';

/** The value of one series line of /metrics (0 when absent). */
async function metric(gw: TestGateway, series: string): Promise<number> {
  const text = await (await request(`${gw.url}/metrics`)).body.text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

async function post(url: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'text/plain', ...headers } });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

describe('mirroring', () => {
  let primary: TestBackend;
  let mirror: TestBackend;
  let failing: TestBackend;
  let silent: TestBackend;
  /** A backend that holds each answer until the test ends it. */
  let holding: TestBackend;
  const held: ServerResponse[] = [];
  let gw: TestGateway;
  let h2: ClientHttp2Session;
  const copiesOf = (path: string) => mirror.seen.filter((s) => s.url.startsWith(path));
  before(async () => {
    primary = await startBackend((req, res, body) => json(res, 201, { got: body.length, url: req.url }));
    mirror = await startBackend((_req, res) => json(res, 200, { mirror: true }));
    failing = await startBackend((_req, res) => {
      res.writeHead(500);
      res.end('mirror broke');
    });
    silent = await startBackend(() => {
      /* never answers */
    });
    holding = await startBackend((_req, res) => void held.push(res));
    const dead = await closedPort();
    const route = (name: string, mirrorKeys: string, extra = '') => `
  - method: POST
    route: /${name}
    path: /${name}
    public: true
    service: ${primary.host}
    mirror: { ${mirrorKeys} }
${extra}`;
    gw = await startGateway(`
config:
  http2: { cleartext: true }
routes:
${route('all', `service: ${mirror.host}`)}
${route('half', `service: ${mirror.host}, percent: 50`)}
${route('none', `service: ${mirror.host}, percent: 0`)}
${route('small', `service: ${mirror.host}, maxBodyBytes: 10`)}
${route('streamed', `service: ${mirror.host}, maxBodyBytes: 100000`, '    requestBuffering: false')}
${route('streamed-small', `service: ${mirror.host}, maxBodyBytes: 10`, '    requestBuffering: false')}
${route('failing', `service: ${failing.host}`)}
${route('silent', `service: ${silent.host}, maxInFlight: 2, timeoutSec: 60`)}
${route('dead', `service: 127.0.0.1:${dead}`)}
  - method: POST
    route: /held
    path: /held
    public: true
    service: ${holding.host}
    mirror: { service: ${mirror.host} }
`);
    h2 = connect(gw.url);
  });
  after(async () => {
    h2.close();
    await closeAll(gw, primary, mirror, failing, silent, holding);
  });

  it('copies a request with its body and request id to the mirror, with the mirror own Host', async () => {
    const res = await post(`${gw.url}/api/all?x=1`, 'hello mirror', { 'x-custom': 'yes' });
    assert.equal(res.status, 201);
    assert.deepEqual(JSON.parse(res.text), { got: 12, url: '/all?x=1' });
    await waitFor(() => copiesOf('/all').length === 1, 5_000, 'the copy');
    const copy = copiesOf('/all')[0]!;
    assert.equal(copy.method, 'POST');
    assert.equal(copy.url, '/all?x=1');
    assert.equal(copy.body.toString(), 'hello mirror');
    assert.equal(copy.headers['x-request-id'], res.headers['x-request-id']);
    assert.equal(copy.headers['x-custom'], 'yes');
    assert.equal(copy.headers.host, mirror.host);
    assert.equal(copy.headers['x-forwarded-host'], `127.0.0.1:${gw.port}`);
    const original = primary.seen.find((s) => s.url === '/all?x=1')!;
    assert.equal(original.headers['x-request-id'], copy.headers['x-request-id']);
  });

  it('copies exactly every second request at percent: 50, and none at percent: 0', async () => {
    for (let i = 0; i < 10; i++) assert.equal((await post(`${gw.url}/api/half`, `n${i}`)).status, 201);
    for (let i = 0; i < 4; i++) assert.equal((await post(`${gw.url}/api/none`, `n${i}`)).status, 201);
    await waitFor(() => copiesOf('/half').length === 5, 5_000, 'five copies');
    await waitFor(
      async () => (await metric(gw, 'portico_mirror_requests_total{route="/half",outcome="answered"}')) === 5,
    );
    assert.deepEqual(
      copiesOf('/half').map((c) => c.body.toString()),
      ['n1', 'n3', 'n5', 'n7', 'n9'],
    );
    assert.equal(copiesOf('/none').length, 0);
    assert.equal(await metric(gw, 'portico_mirror_requests_total{route="/none",outcome="answered"}'), 0);
  });

  it('does not copy a body larger than maxBodyBytes, and counts it; the backend gets it whole', async () => {
    const res = await post(`${gw.url}/api/small`, 'x'.repeat(11));
    assert.equal(res.status, 201);
    assert.equal((JSON.parse(res.text) as { got: number }).got, 11);
    await waitFor(
      async () => (await metric(gw, 'portico_mirror_dropped_total{route="/small",reason="body-too-large"}')) === 1,
    );
    assert.equal(copiesOf('/small').length, 0);
  });

  it('copies a streamed body as it passes, chunked or not, and both sides get all of it', async () => {
    const big = Buffer.alloc(50_000, 'b');
    const res = await request(`${gw.url}/api/streamed`, {
      method: 'POST',
      // A stream of unknown length: undici sends it chunked.
      body: Readable.from(
        (async function* () {
          yield big.subarray(0, 20_000);
          await new Promise((r) => setTimeout(r, 20));
          yield big.subarray(20_000);
        })(),
      ),
    });
    assert.equal(res.statusCode, 201);
    assert.equal(((await res.body.json()) as { got: number }).got, 50_000);
    await waitFor(() => copiesOf('/streamed').length === 1, 5_000, 'the streamed copy');
    assert.ok(copiesOf('/streamed')[0]!.body.equals(big));
  });

  it('drops the copy of a streamed body that outgrows maxBodyBytes, never the request', async () => {
    const res = await request(`${gw.url}/api/streamed-small`, {
      method: 'POST',
      body: Readable.from([Buffer.from('0123456789'), Buffer.from('abcdef')]),
    });
    assert.equal(((await res.body.json()) as { got: number }).got, 16);
    await waitFor(
      async () =>
        (await metric(gw, 'portico_mirror_dropped_total{route="/streamed-small",reason="body-too-large"}')) === 1,
    );
    assert.equal(copiesOf('/streamed-small').length, 0);
  });

  it('answers the client unchanged when the mirror answers 500 or is down, and counts it', async () => {
    for (const name of ['failing', 'dead']) {
      const res = await post(`${gw.url}/api/${name}`, 'data');
      assert.equal(res.status, 201);
      assert.deepEqual(JSON.parse(res.text), { got: 4, url: `/${name}` });
    }
    await waitFor(
      async () => (await metric(gw, 'portico_mirror_requests_total{route="/failing",outcome="answered"}')) === 1,
    );
    await waitFor(
      async () => (await metric(gw, 'portico_mirror_requests_total{route="/dead",outcome="failed"}')) === 1,
    );
  });

  it('never delays the client for a mirror that never answers, and drops copies past maxInFlight', async () => {
    const times: number[] = [];
    for (let i = 0; i < 4; i++) {
      const started = performance.now();
      const res = await post(`${gw.url}/api/silent`, 'data');
      times.push(performance.now() - started);
      assert.equal(res.status, 201);
    }
    // The mirror holds every copy for timeoutSec (60 s): an answer that waited for it would take that long.
    assert.ok(Math.max(...times) < 2_000, times.join(', '));
    await waitFor(() => silent.seen.length === 2, 5_000, 'two copies held by the silent mirror');
    assert.equal(await metric(gw, 'portico_mirror_dropped_total{route="/silent",reason="in-flight-limit"}'), 2);
  });

  it('copies a streamed HTTP/2 request body as it passes', async () => {
    const r = await h2request(h2, '/api/streamed?h2=1', { ':method': 'POST' }, 'streamed over h2');
    assert.equal(r.status, 201);
    assert.equal((JSON.parse(r.body) as { got: number }).got, 16);
    await waitFor(() => copiesOf('/streamed?h2=1').length === 1, 5_000, 'the HTTP/2 streamed copy');
    assert.equal(copiesOf('/streamed?h2=1')[0]!.body.toString(), 'streamed over h2');
  });

  it('copies HTTP/2 requests too', async () => {
    const r = await h2request(h2, '/api/all?h2=1', { ':method': 'POST', 'content-length': '5' }, 'h2-hi');
    assert.equal(r.status, 201);
    await waitFor(() => copiesOf('/all?h2=1').length === 1, 5_000, 'the HTTP/2 copy');
    const copy = copiesOf('/all?h2=1')[0]!;
    assert.equal(copy.body.toString(), 'h2-hi');
    assert.equal(copy.headers['x-request-id'], r.headers['x-request-id']);
  });

  for (const protocol of ['HTTP/1.1', 'HTTP/2'] as const)
    it(`sends the copy only once the client has its answer, never on its way (${protocol})`, async () => {
      const path = `/held?${protocol === 'HTTP/2' ? 'h2' : 'h1'}`;
      const answer =
        protocol === 'HTTP/2'
          ? h2request(h2, `/api${path}`, { ':method': 'POST', 'content-length': '4' }, 'held')
          : post(`${gw.url}/api${path}`, 'held');
      await waitFor(() => holding.seen.some((s) => s.url === path), 5_000, 'the held call at the backend');
      // A copy made on the request's way would have left before the backend was even called: a
      // later request's copy reaching the mirror first shows that none is on its way.
      const barrier = `/all?barrier-${protocol === 'HTTP/2' ? 'h2' : 'h1'}`;
      assert.equal((await post(`${gw.url}/api${barrier}`, 'barrier')).status, 201);
      await waitFor(() => copiesOf(barrier).length === 1, 5_000, 'the later copy');
      assert.equal(copiesOf(path).length, 0, 'no copy while the client waits for its answer');
      held.shift()!.end('done');
      assert.equal((await answer).status, 200);
      await waitFor(() => copiesOf(path).length === 1, 5_000, 'the copy, after the answer');
      assert.equal(copiesOf(path)[0]!.body.toString(), 'held');
    });
});
