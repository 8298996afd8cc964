/**
 * Named upstreams (`upstreams:`) end to end with real local backends: round-robin spreads evenly,
 * least-request sends fewer calls to a slow target, a dead target is ejected and gets traffic
 * again once its ejection time is over, weights are honoured, each target gets its own Host,
 * mapping rules and WebSocket routes name upstreams too, per-route timeouts override the global
 * ones, and `portico check` reports mistakes at their line.
 */
import { after, before, describe, it } from 'node:test';
import { createServer, type Server } from 'node:http';
import { createSecureServer } from 'node:http2';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { closedPort, json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/wait-for.js';
import { createTestCa } from '../support/certs.js';
import { handshakeHeaders, startWsBackend, upgradeRequest, type WsBackend } from '../support/ws-backend.js';
import { loadConfigText } from '../../src/config/load.js';
import { formatProblem } from '../../src/config/problems.js';
import { formatRoutes } from '../../src/cli/routes-table.js';
import { closeAll } from '../support/close-all.js';

const named = (b: TestBackend, name: string) => (req: { url?: string | undefined }, res: Parameters<typeof json>[0]) =>
  json(res, 200, { from: name, url: req.url });

/** Which backend answered each of `n` GETs of `url`, one after the other (the `from` of its JSON), counted. */
async function answeredBy(url: string, n: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const res = await request(url);
    const body = (await res.body.json()) as { from: string };
    counts[body.from] = (counts[body.from] ?? 0) + 1;
  }
  return counts;
}

describe('named upstreams', () => {
  let a: TestBackend;
  let b: TestBackend;
  let c: TestBackend;
  let slow: TestBackend;
  let silent: TestBackend;
  let ws: WsBackend;
  let dead: number;
  let gw: TestGateway;
  let clock = 1_000_000;
  before(async () => {
    a = await startBackend((req, res) => named(a, 'a')(req, res));
    b = await startBackend((req, res) => named(b, 'b')(req, res));
    c = await startBackend((req, res) => named(c, 'c')(req, res));
    slow = await startBackend((req, res) => setTimeout(() => json(res, 200, { from: 'slow' }), 30));
    silent = await startBackend(() => {
      /* never answers: only the route's own backendSec ends the call */
    });
    ws = await startWsBackend();
    dead = await closedPort();
    gw = await startGateway(
      `
upstreams:
  rr:
    balance: round-robin
    targets: [${a.host}, ${b.host}, ${c.host}]
  weighted:
    balance: round-robin
    targets:
      - { target: ${a.host}, weight: 3 }
      - ${b.host}
  lr:
    targets: [${a.host}, ${slow.host}]
  flaky:
    balance: round-robin
    targets: [${a.host}, "127.0.0.1:${dead}", ${b.host}]
    outlierDetection: { consecutiveFailures: 2, baseEjectionSec: 10 }
  chat:
    targets: [${ws.host}]
  halfdead:
    targets: [${a.host}, "127.0.0.1:${dead}"]
routes:
  - { method: GET, route: /halfdead, service: halfdead, path: /h, public: true, retries: 2 }
  - { method: GET, route: /rr, service: rr, path: /rr, public: true }
  - { method: GET, route: /weighted, service: weighted, path: /w, public: true }
  - { method: GET, route: /lr, service: lr, path: /lr, public: true }
  - { method: GET, route: /flaky, service: flaky, path: /f, public: true, retries: 0 }
  - { method: GET, route: /mapped, service: ${a.host}, path: /items, public: true,
      mapping: [{ path: "/users/{id}", service: rr, tag: user }] }
  - { method: GET, route: /chat, service: chat, path: /chat, public: true, isWebSocket: true }
  - { method: GET, route: /quick, service: ${silent.host}, path: /quick, public: true, timeouts: { backendSec: 0.2 } }
`,
      process.env,
      { now: () => clock },
    );
  });
  after(async () => {
    await gw.close();
    for (const s of [a, b, c, slow, silent]) await s.close();
    await ws.close();
  });

  const from = async (path: string) => {
    const res = await request(`${gw.url}/api${path}`);
    const body = (await res.body.json()) as { from?: string };
    return { status: res.statusCode, from: body.from, body };
  };
  const count = async (path: string, n: number, concurrency = 10) => {
    const counts: Record<string, number> = {};
    let failures = 0;
    for (let i = 0; i < n; i += concurrency) {
      const batch = await Promise.all(Array.from({ length: Math.min(concurrency, n - i) }, () => from(path)));
      for (const r of batch) {
        if (r.status !== 200) failures++;
        else counts[r.from!] = (counts[r.from!] ?? 0) + 1;
      }
    }
    return { counts, failures };
  };

  it('round-robin spreads 3,000 requests over 3 targets within 5%', async () => {
    const { counts, failures } = await count('/rr', 3000, 30);
    assert.equal(failures, 0);
    for (const name of ['a', 'b', 'c']) assert.ok(Math.abs(counts[name]! - 1000) <= 50, JSON.stringify(counts));
  });

  it('weights are honoured', async () => {
    const { counts } = await count('/weighted', 400, 1);
    assert.deepEqual(counts, { a: 300, b: 100 });
  });

  it('least-request sends fewer calls to a slow target', async () => {
    // 20 clients, each sending its next request when the last is answered: calls pile up on the slow target.
    const counts: Record<string, number> = {};
    let failures = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        for (let i = 0; i < 20; i++) {
          const r = await from('/lr');
          if (r.status !== 200) failures++;
          else counts[r.from!] = (counts[r.from!] ?? 0) + 1;
        }
      }),
    );
    assert.equal(failures, 0);
    assert.ok((counts.slow ?? 0) < (counts.a ?? 0) / 2, JSON.stringify(counts));
  });

  it('each target gets its own Host header', async () => {
    await from('/rr');
    await from('/rr');
    await from('/rr');
    for (const s of [a, b, c]) assert.equal(s.seen.at(-1)?.headers.host, s.host);
  });

  it('a dead target is ejected after consecutiveFailures, and gets calls again when its time is up', async () => {
    // Round-robin over a, dead, b: the dead target's calls answer 502 until it is ejected.
    const first = await count('/flaky', 12, 1);
    assert.equal(first.failures, 2, 'two failures in a row eject it');
    const line = gw.logs.find((l) => l.msg === 'upstream target ejected');
    assert.equal(line?.target, `http://127.0.0.1:${dead}`);
    assert.equal(line?.ejectedForMs, 10_000);
    const during = await count('/flaky', 30, 1);
    assert.equal(during.failures, 0);
    assert.deepEqual(Object.keys(during.counts).sort(), ['a', 'b']);
    clock += 10_001;
    const afterwards = await count('/flaky', 6, 1);
    assert.ok(afterwards.failures > 0, 'the target is called again');
    assert.ok(gw.logs.some((l) => l.msg === 'upstream target back in service'));
    // Still failing once back: ejected again, for twice as long.
    assert.equal(gw.logs.filter((l) => l.msg === 'upstream target ejected').at(-1)?.ejectedForMs, 20_000);
    const metrics = await (await request(`${gw.url}/metrics`)).body.text();
    console.log(
      metrics
        .split('\n')
        .filter((l) => l.includes('upstream_target'))
        .join('\n'),
    );
    assert.match(
      metrics,
      new RegExp(`portico_upstream_target_ejections_total\\{upstream="flaky",target="http://127.0.0.1:${dead}"\\} 2`),
    );
    assert.match(
      metrics,
      /portico_upstream_target_requests_total\{upstream="rr",target="http:\/\/127\.0\.0\.1:\d+"\} \d+/,
    );
  });

  it('a dead target that least-request avoids is still visible: one warning and the gauge at 0', async () => {
    const result = await count('/halfdead', 40, 4);
    assert.equal(result.failures, 0, 'every request succeeds by retry');
    const target = `http://127.0.0.1:${dead}`;
    const failing = gw.logs.filter(
      (l) => String(l.msg).startsWith('upstream target failing') && l.upstream === 'halfdead' && l.target === target,
    );
    assert.equal(failing.length, 1, 'said once, not per request');
    assert.equal(failing[0]!.level, 40);
    const metrics = await (await request(`${gw.url}/metrics`)).body.text();
    assert.match(metrics, new RegExp(`portico_upstream_target_healthy\\{upstream="halfdead",target="${target}"\\} 0`));
    assert.match(metrics, new RegExp(`portico_upstream_target_healthy\\{upstream="halfdead",target="${a.url}"\\} 1`));
    const stats = [...gw.gateway.upstreams.targets()].find((t) => t.upstream === 'halfdead' && t.target.key === target);
    assert.equal(stats?.target.health.failing, true);
  });

  it('a mapping rule names an upstream', async () => {
    const before = b.seen.length + c.seen.length + a.seen.length;
    const res = await request(`${gw.url}/api/mapped`);
    assert.equal(res.statusCode, 200);
    await res.body.text();
    assert.ok(a.seen.length + b.seen.length + c.seen.length > before);
  });

  it('a WebSocket route names an upstream', async () => {
    const answer = await upgradeRequest(gw.url, '/api/chat', handshakeHeaders());
    assert.equal(answer.kind, 'upgrade');
    if (answer.kind === 'upgrade') answer.socket.destroy();
    assert.equal(ws.upgrades.at(-1)?.headers.host, ws.host);
    const chat = [...gw.gateway.upstreams.targets()].find((t) => t.upstream === 'chat');
    assert.equal(chat?.target.health.requests, 1, 'the handshake counts for the target');
  });

  it("a route's own timeouts override config.timeouts", async () => {
    const started = Date.now();
    const res = await request(`${gw.url}/api/quick`);
    await res.body.text();
    assert.equal(res.statusCode, 504);
    // undici times response heads with a timer of about 1 s resolution; the global default is 30 s.
    assert.ok(Date.now() - started < 5_000);
  });

  it('portico routes shows the targets', () => {
    const table = formatRoutes(gw.gateway.config());
    assert.match(table, new RegExp(`rr\\(${a.host.replace(/\./g, '\\.')}\\|${b.host.replace(/\./g, '\\.')}\\|`));
  });
});

describe('portico check: upstreams', () => {
  const problems = (text: string) => {
    const r = loadConfigText(text, 'g.yaml', {});
    return r.ok ? [] : r.problems.map(formatProblem);
  };

  it('reports empty and duplicate targets, bad services, a misspelt upstream name and bad keys', () => {
    assert.deepEqual(
      problems(`upstreams:
  users:
    targets: ["10.0.0.1:80", "http://10.0.0.1", "ftp://x"]
    balance: fastest
  empty:
    targets: []
routes:
  - { method: GET, route: /u, service: usres, path: /u }
`),
      [
        'g.yaml:3:30: upstreams.users.targets[1]: http://10.0.0.1:80 is also targets[0]; list each target once',
        'g.yaml:3:49: upstreams.users.targets[2]: service "ftp://x" must use http:// or https://',
        'g.yaml:4:14: upstreams.users.balance: "fastest" is not one of least-request, round-robin, random',
        'g.yaml:6:14: upstreams.empty.targets: an upstream needs at least one target (host:port)',
        'g.yaml:8:40: routes[0].service: no upstream is named "usres" (did you mean "users"?)',
      ],
    );
  });
});

describe('retries on a named upstream', () => {
  let a: TestBackend;
  let b: TestBackend;
  let busy: TestBackend;
  let dead: number;
  let dead2: number;
  let gw: TestGateway;
  before(async () => {
    a = await startBackend((req, res) => json(res, 200, { from: 'a' }));
    b = await startBackend((req, res) => json(res, 200, { from: 'b' }));
    busy = await startBackend((req, res) => json(res, 503, { from: 'busy' }));
    dead = await closedPort();
    dead2 = await closedPort();
    gw = await startGateway(`
upstreams:
  oneDown:
    balance: round-robin
    targets: [${a.host}, "127.0.0.1:${dead}", ${b.host}]
    outlierDetection: { enabled: false }
  oneDownToo:
    balance: round-robin
    targets: [${a.host}, "127.0.0.1:${dead}", ${b.host}]
    outlierDetection: { enabled: false }
  oneBusy:
    balance: round-robin
    targets: [${busy.host}, ${a.host}]
    outlierDetection: { enabled: false }
  allDown:
    targets: ["127.0.0.1:${dead}", "127.0.0.1:${dead2}"]
    outlierDetection: { enabled: false }
routes:
  - { method: GET, route: /get, service: oneDown, path: /get, public: true }
  - { method: POST, route: /post, service: oneDownToo, path: /post, public: true }
  - { method: POST, route: /post-retried, service: oneDownToo, path: /post, public: true, retryNonIdempotent: true }
  - { method: GET, route: /busy, service: oneBusy, path: /busy, public: true }
  - { method: GET, route: /none, service: oneDown, path: /get, public: true, retries: 0 }
  - { method: GET, route: /all-down, service: allDown, path: /x, public: true }
`);
  });
  after(async () => {
    await gw.close();
    for (const s of [a, b, busy]) await s.close();
  });

  const statuses = async (path: string, n: number, method: 'GET' | 'POST' = 'GET') => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const res = await request(`${gw.url}/api${path}`, { method, ...(method === 'POST' ? { body: '{"x":1}' } : {}) });
      await res.body.text();
      out.push(res.statusCode);
    }
    return out;
  };
  const retriesOf = async (route: string) => {
    const text = await (await request(`${gw.url}/metrics`)).body.text();
    const m = new RegExp(`^portico_upstream_retries_total\\{route="${route}",origin="[^"]+"\\} (\\d+)$`, 'm').exec(
      text,
    );
    return Number(m?.[1] ?? 0);
  };

  it('a GET is retried on another target: no client sees the dead one', async () => {
    // Round-robin a, dead, b: every other request meets the dead target first (its retry takes b's turn).
    const got = await statuses('/get', 16);
    assert.deepEqual(new Set(got), new Set([200]));
    assert.equal(await retriesOf('/get'), 8);
  });

  it('a 503 from one target is retried on another', async () => {
    const before = busy.seen.length;
    const got = await statuses('/busy', 10);
    assert.deepEqual(new Set(got), new Set([200]));
    assert.equal(busy.seen.length - before, 10, 'the busy target was asked first each time, and its 503 never relayed');
  });

  it('a POST is never retried, unless the route opts in; the body goes again whole', async () => {
    const got = await statuses('/post', 9, 'POST');
    assert.equal(got.filter((s) => s === 502).length, 3);
    const opted = await statuses('/post-retried', 9, 'POST');
    assert.deepEqual(new Set(opted), new Set([200]));
    for (const s of [a, b]) assert.equal(s.seen.at(-1)?.body.toString(), '{"x":1}');
  });

  it('retries: 0 turns them off', async () => {
    const got = await statuses('/none', 9);
    assert.equal(got.filter((s) => s === 502).length, 3);
  });

  it('the retry budget caps retries when every target fails', async () => {
    const got = await statuses('/all-down', 40);
    assert.deepEqual(new Set(got), new Set([502]));
    // At most 20% of the calls over 10 s, and at least 10: 10 of 40, not 40.
    assert.equal(await retriesOf('/all-down'), 10);
  });
});

describe('active health checks', () => {
  let a: TestBackend;
  let b: TestBackend;
  const sick = { a: false, b: false };
  let gw: TestGateway;
  before(async () => {
    const make = (name: 'a' | 'b') => (req: { url?: string | undefined }, res: Parameters<typeof json>[0]) =>
      req.url === '/healthz' ? json(res, sick[name] ? 500 : 200, {}) : json(res, 200, { from: name });
    a = await startBackend((req, res) => make('a')(req, res));
    b = await startBackend((req, res) => make('b')(req, res));
    gw = await startGateway(`
upstreams:
  checked:
    balance: round-robin
    targets: [${a.host}, ${b.host}]
    healthCheck: { healthPath: /healthz, intervalSec: 0.05, timeoutSec: 1, healthyThreshold: 2, unhealthyThreshold: 2 }
routes:
  - { method: GET, route: /c, service: checked, path: /c, public: true, retries: 0 }
`);
  });
  after(() => closeAll(gw, a, b));

  const spread = (n: number) => answeredBy(`${gw.url}/api/c`, n);
  const logged = (msg: string, target: TestBackend, times = 1) =>
    waitFor(
      () => gw.logs.filter((l) => l.msg === msg && l.target === `http://${target.host}`).length >= times,
      5_000,
      msg,
    );

  it('checks each target with GET path, and sends no calls to an unhealthy one until it is healthy again', async () => {
    await waitFor(() => a.seen.some((s) => s.url === '/healthz' && s.headers['user-agent'] === 'portico-health-check'));
    sick.b = true;
    await logged('upstream target unhealthy', b);
    assert.deepEqual(await spread(10), { a: 10 });
    const metrics = await (await request(`${gw.url}/metrics`)).body.text();
    assert.match(
      metrics,
      new RegExp(`portico_upstream_target_healthy\\{upstream="checked",target="http://${b.host}"\\} 0`),
    );
    sick.b = false;
    await logged('upstream target healthy', b);
    assert.deepEqual(await spread(10), { a: 5, b: 5 });
  });

  it('when every target is unhealthy, calls go to all of them rather than fail', async () => {
    sick.a = true;
    sick.b = true;
    await logged('upstream target unhealthy', a);
    await logged('upstream target unhealthy', b, 2);
    assert.deepEqual(await spread(4), { a: 2, b: 2 });
    sick.a = false;
    sick.b = false;
  });
});

describe('DNS: a host name target becomes one target per address', () => {
  const servers: Server[] = [];
  let port = 0;
  const seen: { server: string; host: string | undefined }[] = [];
  let answer: readonly string[] | Error = ['127.0.0.1'];
  let gw: TestGateway;
  before(async () => {
    // The same port on two loopback addresses: two instances behind one name.
    for (const address of ['127.0.0.1', '127.0.0.2']) {
      const server = createServer((req, res) => {
        seen.push({ server: address, host: req.headers.host });
        json(res, 200, { from: address });
      });
      await new Promise<void>((resolve) => server.listen(port, address, resolve));
      port = (server.address() as AddressInfo).port;
      servers.push(server);
    }
    gw = await startGateway(
      `
upstreams:
  svc:
    balance: round-robin
    dnsRefreshSec: 0.05
    targets: ["svc.example:${port}"]
routes:
  - { method: GET, route: /svc, service: svc, path: /svc, public: true }
`,
      process.env,
      {
        lookup: async (hostname) => {
          assert.equal(hostname, 'svc.example');
          if (answer instanceof Error) throw answer;
          return answer;
        },
      },
    );
  });
  after(async () => {
    await gw.close();
    for (const s of servers) await new Promise((resolve) => s.close(resolve));
  });

  const resolvedTo = (addresses: string[]) =>
    waitFor(
      () =>
        gw.logs.some(
          (l) =>
            l.msg === 'upstream targets resolved' &&
            JSON.stringify(l.targets) === JSON.stringify(addresses.map((a) => `http://${a}:${port}`)),
        ),
      5_000,
      `targets ${addresses.join(', ')}`,
    );
  const spread = (n: number) => answeredBy(`${gw.url}/api/svc`, n);

  it('calls every address the name resolves to, with the name as Host; follows additions and removals', async () => {
    await resolvedTo(['127.0.0.1']);
    assert.deepEqual(await spread(4), { '127.0.0.1': 4 });
    assert.equal(seen.at(-1)?.host, `svc.example:${port}`);
    answer = ['127.0.0.2', '127.0.0.1'];
    await resolvedTo(['127.0.0.1', '127.0.0.2']);
    assert.deepEqual(await spread(4), { '127.0.0.1': 2, '127.0.0.2': 2 });
    answer = ['127.0.0.2'];
    await resolvedTo(['127.0.0.2']);
    assert.deepEqual(await spread(4), { '127.0.0.2': 4 });
  });

  it('a failed look-up keeps the addresses known before', async () => {
    answer = Object.assign(new Error('getaddrinfo EAI_AGAIN svc.example'), { code: 'EAI_AGAIN' });
    await waitFor(() => gw.logs.some((l) => l.msg === 'upstream target look-up failed; keeping its addresses'));
    assert.deepEqual(await spread(2), { '127.0.0.2': 2 });
    answer = ['127.0.0.2'];
  });
});

describe('reload of a named upstream', () => {
  it('keeps the pools and health of targets that stay, adds new ones, drops removed ones', async () => {
    const a = await startBackend((req, res) => json(res, 200, { from: 'a' }));
    const b = await startBackend((req, res) => json(res, 200, { from: 'b' }));
    const dead = await closedPort();
    const clock = 1_000_000;
    const yaml = (targets: string) => `
upstreams:
  u:
    balance: round-robin
    targets: [${targets}]
    outlierDetection: { consecutiveFailures: 1 }
routes:
  - { method: GET, route: /u, service: u, path: /u, public: true, retries: 0 }
`;
    const gw = await startGateway(yaml(`${a.host}, "127.0.0.1:${dead}"`), process.env, { now: () => clock });
    try {
      const get = async () => {
        const res = await request(`${gw.url}/api/u`);
        return ((await res.body.json()) as { from?: string }).from ?? String(res.statusCode);
      };
      // Round-robin: a, then the dead target (502), ejected at its first failure.
      assert.deepEqual([await get(), await get()], ['a', '502']);
      assert.ok(gw.logs.some((l) => l.msg === 'upstream target ejected'));
      // Reload: the dead target stays (still ejected: it gets nothing), b is added.
      gw.reload(yaml(`${a.host}, "127.0.0.1:${dead}", ${b.host}`));
      const after = [];
      for (let i = 0; i < 6; i++) after.push(await get());
      assert.deepEqual([...new Set(after)].sort(), ['a', 'b']);
      // Reload without the dead target: its pool is dropped, nothing fails.
      gw.reload(yaml(`${a.host}, ${b.host}`));
      const targets = [...gw.gateway.upstreams.targets()].map((t) => t.target.key).sort();
      assert.deepEqual(targets, [`http://${a.host}`, `http://${b.host}`].sort());
    } finally {
      await closeAll(gw, a, b);
    }
  });
});

describe('http2: true towards the targets', () => {
  it('calls an HTTP/2-only backend over h2, bodies both ways', async () => {
    const ca = createTestCa();
    const pair = ca.issue('localhost');
    const backend = createSecureServer({
      cert: readFileSync(pair.certFile),
      key: readFileSync(pair.keyFile),
      allowHTTP1: false,
    });
    backend.on('stream', (stream, headers) => {
      let body = '';
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => (body += c));
      stream.on('end', () => {
        stream.respond({ ':status': 200, 'content-type': 'application/json' });
        stream.end(JSON.stringify({ version: '2', method: headers[':method'], path: headers[':path'], body }));
      });
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    const port = (backend.address() as AddressInfo).port;
    const gw = await startGateway(`
upstreams:
  h2: { http2: true, targets: ["https://localhost:${port}"] }
config:
  upstreamTls: { caFile: ${ca.caFile} }
routes:
  - { method: POST, route: /echo, service: h2, path: /echo, public: true }
`);
    try {
      const res = await request(`${gw.url}/api/echo?x=1`, { method: 'POST', body: '{"hello":"h2"}' });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(await res.body.json(), {
        version: '2',
        method: 'POST',
        path: '/echo?x=1',
        body: '{"hello":"h2"}',
      });
    } finally {
      await gw.close();
      await new Promise((resolve) => backend.close(resolve));
      ca.remove();
    }
  });

  it('portico check refuses http2 with a plain-HTTP target', () => {
    const r = loadConfigText(
      `upstreams:
  h2: { http2: true, targets: ["127.0.0.1:9"] }
routes:
  - { method: GET, route: /a, service: h2, path: /a }
`,
      'g.yaml',
      {},
    );
    assert.equal(r.ok, false);
    assert.match(
      r.ok ? '' : r.problems.map(formatProblem).join('\n'),
      /upstreams\.h2\.targets\[0\]: http2: true needs https:\/\/ targets/,
    );
  });
});

describe('retries of JSON calls: aggregated backends and mapping calls', () => {
  it('an aggregated backend and a mapping call on an upstream with a dead target still complete', async () => {
    const a = await startBackend((req, res) =>
      req.url?.startsWith('/users/')
        ? json(res, 200, { name: `user ${req.url}` })
        : json(res, 200, [{ id: 1, userId: 'u1' }]),
    );
    const dead = await closedPort();
    const gw = await startGateway(`
upstreams:
  users:
    balance: round-robin
    targets: ["127.0.0.1:${dead}", ${a.host}]
    outlierDetection: { enabled: false }
routes:
  - { method: GET, route: /agg, public: true,
      backends: [{ service: users, path: /users/1, group: one }, { service: users, path: /users/2, group: two }] }
  - { method: GET, route: /mapped, service: ${a.host}, path: /items, public: true,
      mapping: [{ path: "/users/{userId}", service: users, tag: user }] }
`);
    try {
      for (let i = 0; i < 4; i++) {
        const res = await request(`${gw.url}/api/agg`);
        assert.equal(res.headers['x-portico-completed'], 'true');
        assert.deepEqual(await res.body.json(), { one: { name: 'user /users/1' }, two: { name: 'user /users/2' } });
      }
      for (let i = 0; i < 4; i++) {
        const res = await request(`${gw.url}/api/mapped`);
        assert.deepEqual(await res.body.json(), [{ id: 1, userId: 'u1', user: { name: 'user /users/u1' } }]);
      }
      const metrics = await (await request(`${gw.url}/metrics`)).body.text();
      assert.match(metrics, /portico_upstream_retries_total\{route="\/agg",origin="users"\} [1-9]/);
    } finally {
      await closeAll(gw, a);
    }
  });
});
