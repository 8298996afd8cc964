/**
 * Traffic splits (docs/routing.md "Traffic splits") through the real gateway to real backends:
 * a 90/10 split lands on its weights over HTTP/1.1 and HTTP/2, sticky clients (header, cookie)
 * stay on one arm, an arm may be a named upstream, each arm has its own circuit, the metrics count
 * each arm, and reloads that change the weights under load fail no request.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type ClientHttp2Session } from 'node:http2';
import { Agent, request } from 'undici';
import { SignJWT } from 'jose';
import { closedPort, json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { h2request } from '../support/http2.js';
import { closeAll } from '../support/close-all.js';
import { formatRoutes } from '../../src/cli/routes-table.js';
import type { StatusDocument } from '../../src/admin/types.js';
import { adminRequest } from '../support/admin.js';
import { waitFor } from '../support/wait-for.js';

/** The gateway file: `/api/items` split between a and b by `weights`, with the extra route keys given. */
function config(a: TestBackend, b: TestBackend, weights: [number, number]): string {
  return `
config:
  http2: { cleartext: true }
upstreams:
  canary:
    targets: [${b.host}]
routes:
  - method: GET
    route: /items
    path: /items
    public: true
    split:
      - service: ${a.host}
        weight: ${weights[0]}
      - upstream: canary
        weight: ${weights[1]}
  - method: GET
    route: /sticky/header
    path: /items
    public: true
    stickyBy: header:x-user
    split:
      - { service: ${a.host}, weight: 90 }
      - { service: ${b.host}, weight: 10 }
  - method: GET
    route: /sticky/cookie
    path: /items
    public: true
    stickyBy: cookie:sid
    split:
      - { service: ${a.host}, weight: 50 }
      - { service: ${b.host}, weight: 50 }
`;
}

/** Which backend answered each of `n` GETs of `url`, `concurrency` at a time over keep-alive. */
async function countArms(url: string, n: number, concurrency: number, dispatcher: Agent) {
  const counts: Record<string, number> = {};
  let failures = 0;
  let left = n;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        const res = await request(url, { dispatcher });
        const body = (await res.body.json()) as { from?: string };
        if (res.statusCode !== 200) failures++;
        else counts[body.from!] = (counts[body.from!] ?? 0) + 1;
      }
    }),
  );
  return { counts, failures };
}

describe('traffic splits', () => {
  let a: TestBackend;
  let b: TestBackend;
  let gw: TestGateway;
  let h2: ClientHttp2Session;
  const agent = new Agent({ connections: 8 });
  before(async () => {
    a = await startBackend((_req, res) => json(res, 200, { from: 'a' }));
    b = await startBackend((_req, res) => json(res, 200, { from: 'b' }));
    gw = await startGateway(config(a, b, [90, 10]));
    h2 = connect(gw.url);
  });
  after(async () => {
    h2.close();
    await agent.close();
    await closeAll(gw, a, b);
  });

  it('sends 90/10 of 1,000 HTTP/1.1 requests over keep-alive to the two arms, within 1 point', async () => {
    const { counts, failures } = await countArms(`${gw.url}/api/items`, 1_000, 8, agent);
    assert.equal(failures, 0);
    assert.ok(Math.abs((counts.b ?? 0) / 1_000 - 0.1) <= 0.01, JSON.stringify(counts));
    assert.equal((counts.a ?? 0) + (counts.b ?? 0), 1_000);
  });

  it('splits HTTP/2 requests by the same weights', async () => {
    const counts: Record<string, number> = {};
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => h2request(h2, '/api/items')));
      for (const r of answers) {
        assert.equal(r.status, 200);
        const from = (JSON.parse(r.body) as { from: string }).from;
        counts[from] = (counts[from] ?? 0) + 1;
      }
    }
    assert.ok(Math.abs((counts.b ?? 0) / 200 - 0.1) <= 0.01, JSON.stringify(counts));
  });

  it('keeps every client of a header-sticky split on one arm, and spreads the clients by weight', async () => {
    const arms = new Map<string, string>();
    for (let round = 0; round < 3; round++)
      for (let user = 0; user < 200; user++) {
        const res = await gw.get('/api/sticky/header', { headers: { 'x-user': `user-${user}` }, dispatcher: agent });
        const from = (res.json() as { from: string }).from;
        const before = arms.get(`user-${user}`);
        if (before !== undefined) assert.equal(from, before, `user-${user} moved`);
        arms.set(`user-${user}`, from);
      }
    const onB = [...arms.values()].filter((v) => v === 'b').length;
    assert.ok(onB > 5 && onB < 40, `${onB} of 200 sticky clients on the 10% arm`);
  });

  it('keeps a cookie-sticky client on one arm over HTTP/2 too', async () => {
    const seen = new Map<string, Set<string>>();
    for (let user = 0; user < 40; user++)
      for (let round = 0; round < 3; round++) {
        const r = await h2request(h2, '/api/sticky/cookie', { cookie: `theme=x; sid=s${user}` });
        const from = (JSON.parse(r.body) as { from: string }).from;
        seen.set(`s${user}`, (seen.get(`s${user}`) ?? new Set()).add(from));
      }
    for (const [sid, arms] of seen) assert.equal(arms.size, 1, `${sid} saw ${[...arms].join(', ')}`);
    const both = new Set([...seen.values()].map((s) => [...s][0]));
    assert.deepEqual([...both].sort(), ['a', 'b']);
  });

  it('counts each arm in portico_split_requests_total', async () => {
    const text = await (await request(`${gw.url}/metrics`)).body.text();
    const line = (arm: string) =>
      text.split('\n').find((l) => l.startsWith(`portico_split_requests_total{route="/items",arm="${arm}"}`));
    assert.ok(line('canary'), text.slice(0, 500));
    assert.ok(line(a.host));
    assert.equal(Number(line('canary')!.split(' ')[1]) + Number(line(a.host)!.split(' ')[1]), 1_200);
  });

  it('fails no request while reloads change the weights under load', async () => {
    let stop = false;
    const statuses: number[] = [];
    const load = Promise.all(
      Array.from({ length: 6 }, async () => {
        while (!stop) {
          const res = await request(`${gw.url}/api/items`, { dispatcher: agent });
          await res.body.dump();
          statuses.push(res.statusCode);
        }
      }),
    );
    const weights: [number, number][] = [
      [50, 50],
      [10, 90],
      [0, 100],
      [100, 0],
      [90, 10],
    ];
    for (const w of weights) {
      const before = statuses.length;
      gw.reload(config(a, b, w));
      // Each configuration serves some requests before the next reload.
      while (statuses.length < before + 50) await new Promise((r) => setImmediate(r));
    }
    stop = true;
    await load;
    assert.ok(statuses.length >= 250);
    assert.deepEqual(
      statuses.filter((s) => s !== 200),
      [],
    );
  });
});

describe('a split arm with its own circuit', () => {
  let a: TestBackend;
  let gw: TestGateway;
  before(async () => {
    a = await startBackend((_req, res) => json(res, 200, { from: 'a' }));
    const dead = await closedPort();
    gw = await startGateway(`
config:
  circuitBreaker: { enabled: true, maxFailures: 3, timeoutSec: 60 }
routes:
  - method: GET
    route: /items
    path: /items
    public: true
    split:
      - { service: ${a.host}, weight: 1 }
      - { service: 127.0.0.1:${dead}, weight: 1 }
`);
  });
  after(() => closeAll(gw, a));

  it("opens the dead arm's circuit only: the live arm keeps answering", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await gw.get('/api/items')).status);
    // Alternating arms: a answers 200 every time; the dead arm's 502s open its circuit (503).
    assert.equal(statuses.filter((s) => s === 200).length, 10);
    assert.ok(statuses.includes(503), statuses.join(','));
    assert.deepEqual(
      statuses.filter((s, i) => i % 2 === 0),
      Array(10).fill(200),
    );
  });
});

describe('splits of SSE and filtered routes', () => {
  let a: TestBackend;
  let b: TestBackend;
  let gw: TestGateway;
  const answer = (from: string) => (req: { url?: string | undefined }, res: Parameters<typeof json>[0]) => {
    if (req.url === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${from}\n\n`);
    } else json(res, 200, { from, secret: 'x' });
  };
  before(async () => {
    a = await startBackend((req, res) => answer('a')(req, res));
    b = await startBackend((req, res) => answer('b')(req, res));
    gw = await startGateway(`
routes:
  - method: GET
    route: /events
    path: /events
    public: true
    isSSE: true
    split:
      - { service: ${a.host}, weight: 3 }
      - { service: ${b.host}, weight: 1 }
  - method: GET
    route: /filtered
    path: /filtered
    public: true
    response: { deny: [secret] }
    split:
      - { service: ${a.host}, weight: 1 }
      - { service: ${b.host}, weight: 1 }
`);
  });
  after(() => closeAll(gw, a, b));

  it('splits an SSE route by weight, each stream from one arm', async () => {
    const seen: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await gw.get('/api/events');
      assert.equal(r.headers['content-type'], 'text/event-stream');
      seen.push(r.text.trim());
    }
    assert.equal(seen.filter((e) => e === 'data: b').length, 2, seen.join(' '));
    assert.equal(seen.filter((e) => e === 'data: a').length, 6);
  });

  it('splits a filtered (mapping) route, each answer filtered', async () => {
    const froms: unknown[] = [];
    for (let i = 0; i < 4; i++) froms.push((await gw.get('/api/filtered')).json());
    assert.deepEqual(froms, [{ from: 'a' }, { from: 'b' }, { from: 'a' }, { from: 'b' }]);
  });

  it('shows each arm and its weight in portico routes', () => {
    const table = formatRoutes(gw.gateway.config());
    assert.match(table, new RegExp(`split\\(${a.host}=3,${b.host}=1\\)/events`));
  });
});

describe('the status page', () => {
  let a: TestBackend;
  let b: TestBackend;
  let m: TestBackend;
  let gw: TestGateway;
  before(async () => {
    a = await startBackend((_req, res) => json(res, 200, { from: 'a' }));
    b = await startBackend((_req, res) => json(res, 200, { from: 'b' }));
    m = await startBackend((_req, res) => json(res, 200, {}));
    gw = await startGateway(`
config:
  admin: { port: 0 }
routes:
  - method: GET
    route: /items
    path: /items
    public: true
    split:
      - { service: ${a.host}, weight: 3 }
      - { service: ${b.host}, weight: 1 }
    mirror: { service: ${m.host}, percent: 50 }
`);
  });
  after(() => closeAll(gw, a, b, m));

  it("shows each arm's weight and requests, and the mirror's copies", async () => {
    for (let i = 0; i < 8; i++) assert.equal((await gw.get('/api/items')).status, 200);
    const status = async () =>
      (await adminRequest(gw.gateway.adminAddress()!.port, '/api/status')).json() as StatusDocument;
    await waitFor(async () => (await status()).routes[0]!.mirror?.answered === 4, 5_000, 'four copies answered');
    const route = (await status()).routes[0]!;
    assert.deepEqual(route.split, [
      { arm: a.host, weight: 3, requests: 6 },
      { arm: b.host, weight: 1, requests: 2 },
    ]);
    assert.deepEqual(route.mirror, { service: m.host, percent: 50, answered: 4, failed: 0, dropped: 0 });
    assert.equal(route.backend, `split(${a.host}=3,${b.host}=1)/items`);
  });
});

describe('a split sticky by a claim of the token', () => {
  const SECRET = 'split-sticky-secret-0123456789abcdef0123';
  let a: TestBackend;
  let b: TestBackend;
  let gw: TestGateway;
  before(async () => {
    a = await startBackend((_req, res) => json(res, 200, { from: 'a' }));
    b = await startBackend((_req, res) => json(res, 200, { from: 'b' }));
    gw = await startGateway(`
config:
  auth: { secret: ${SECRET} }
routes:
  - method: GET
    route: /me
    path: /me
    protected: true
    stickyBy: claims.sub
    split:
      - { service: ${a.host}, weight: 1 }
      - { service: ${b.host}, weight: 1 }
`);
  });
  after(() => closeAll(gw, a, b));

  it('keeps each subject on one arm, whichever token it presents', async () => {
    const key = new TextEncoder().encode(SECRET);
    const arms = new Map<string, Set<string>>();
    for (let user = 0; user < 20; user++)
      for (let token = 0; token < 3; token++) {
        // A new token each time (another jti): only the subject holds the client on its arm.
        const jwt = await new SignJWT({ sub: `user-${user}`, jti: `t${token}` })
          .setProtectedHeader({ alg: 'HS256' })
          .sign(key);
        const res = await gw.get('/api/me', { headers: { authorization: `Bearer ${jwt}` } });
        assert.equal(res.status, 200);
        const from = (res.json() as { from: string }).from;
        arms.set(`user-${user}`, (arms.get(`user-${user}`) ?? new Set()).add(from));
      }
    for (const [user, seen] of arms) assert.equal(seen.size, 1, `${user} saw ${[...seen].join(', ')}`);
    assert.equal(new Set([...arms.values()].map((s) => [...s][0])).size, 2);
  });
});
