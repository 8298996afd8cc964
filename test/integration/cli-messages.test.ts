/**
 * The CLI's first-hour mistakes, as a user makes them: each message names what was wrong and how
 * to fix it, in one line, with the exit code the README documents (2 = usage, 1 = cannot run).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startPortico } from '../support/cli-process.js';
import {
  assertPrinted,
  DEFAULT_METRICS_LINE,
  FAKE_DNS_NODE_OPTIONS,
  ROOT,
  runPortico,
  runScript,
} from '../support/cli-run.js';

const fixtures = `${ROOT}test/fixtures/check/`;

// Each case is its own process and shares nothing: they run side by side.
describe('usage mistakes: one line naming the mistake, exit 2', { concurrency: 3 }, () => {
  it('PORT=abc names $PORT and prints no usage text', async () => {
    const r = await runPortico(['start', '--config', 'valid.yaml'], { cwd: fixtures, env: { PORT: 'abc' } });
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'portico: invalid $PORT "abc": expected a port number from 0 to 65535\n');
  });

  it('--port abc names --port', async () => {
    const r = await runPortico(['start', '--port', 'abc'], { env: { PORT: '8080' } });
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'portico: invalid --port "abc": expected a port number from 0 to 65535\n');
  });

  it('PORTICO_LOG_LEVEL=verbose lists the levels and names the variable', async () => {
    const r = await runPortico(['start', '--config', 'valid.yaml'], {
      cwd: fixtures,
      env: { PORTICO_LOG_LEVEL: 'verbose' },
    });
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      'portico: $PORTICO_LOG_LEVEL: "verbose" is not a log level (expected one of trace, debug, info, warn, error, fatal, silent)\n',
    );
  });

  it('PORTICO_LOG_LEVEL=DEBUG says levels are lower case', async () => {
    const r = await runPortico(['start'], { env: { PORTICO_LOG_LEVEL: 'DEBUG' } });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /levels are lower case: debug\)\n$/);
  });

  it("--prot 9000 suggests --port instead of node's parseArgs text", async () => {
    const r = await runPortico(['start', '--prot', '9000']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'portico: unknown option --prot (did you mean --port?)\n');
  });

  it('an option far from any known one points to --help', async () => {
    const r = await runPortico(['check', '--frobnicate']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'portico: unknown option --frobnicate (portico --help lists the options)\n');
  });

  it('an option without its value says so', async () => {
    const r = await runPortico(['start', '--config']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'portico: option --config needs a value\n');
  });

  it('no command: usage on stderr, exit 2 (like any other usage error)', async () => {
    const r = await runPortico([]);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(
      r.stderr,
      /^portico: missing command \(start, check, routes, status, token, key or init\)\n\nUsage: portico <command>/,
    );
  });

  it('--help: usage on stdout, exit 0', async () => {
    const r = await runPortico(['--help']);
    assert.equal(r.code, 0);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^Usage: portico <command> \[options\]\n[\s\S]*\n {2}token {4}/);
  });

  it('a misspelt command gets a suggestion and the usage text', async () => {
    const r = await runPortico(['chek']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^portico: unknown command "chek" \(did you mean check\?\)\n\nUsage:/);
  });

  it('npm run bench:ab -- --help prints its usage, not a stack trace', async () => {
    const r = await runScript(`${ROOT}bench/ab.ts`, ['--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: npm run bench:ab -- --old DIR/);
    assert.doesNotMatch(r.stdout + r.stderr, /TypeError|at .*\.ts:\d+/);
  });

  it('bench:ab without --old is a usage error, not a stack trace', async () => {
    const r = await runScript(`${ROOT}bench/ab.ts`, []);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^bench:ab: --old DIR is required/);
    assert.doesNotMatch(r.stderr, /\n {4}at /);
  });
});

describe('a port already in use', () => {
  let holder: Server;
  let port: number;
  before(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    port = (holder.address() as { port: number }).port;
  });
  after(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  it('says another process listens there and how to choose another port, exit 1', async () => {
    const r = await runPortico(['start', '--config', 'valid.yaml', '--host', '127.0.0.1', '--port', String(port)], {
      cwd: fixtures,
    });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `portico: cannot listen on 127.0.0.1:${port}: another process listens there (--port or $PORT to choose another)\n`,
    );
  });
});

describe('backend host names that do not resolve', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'portico-dns-'));
    writeFileSync(
      join(dir, 'dns.yaml'),
      [
        'routes:',
        '  - method: GET',
        '    route: /orders',
        '    service: orders.invalid:8080',
        '    path: /orders',
        '    mapping:',
        '      - { path: "/users/{userId}", service: "http://users.invalid", tag: user }',
        '  - { method: GET, route: /local, service: "127.0.0.1:9", path: /local }',
        '  - { method: GET, route: /named, service: "localhost:9", path: /named }',
        '',
      ].join('\n'),
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('check passes without --resolve: a file written for another network is valid', async () => {
    const r = await runPortico(['check', '--config', 'dns.yaml'], {
      cwd: dir,
      env: { NODE_OPTIONS: FAKE_DNS_NODE_OPTIONS },
    });
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `dns.yaml: ok (3 routes)\n${DEFAULT_METRICS_LINE}`);
  });

  it('check --resolve reports each unresolvable host at its FILE:LINE:COL, exit 1', async () => {
    const r = await runPortico(['check', '--resolve', '--config', 'dns.yaml'], {
      cwd: dir,
      env: { NODE_OPTIONS: FAKE_DNS_NODE_OPTIONS },
    });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      'dns.yaml:4:14: routes[0].service: host "orders.invalid" does not resolve (ENOTFOUND)\n' +
        'dns.yaml:7:45: routes[0].mapping[0].service: host "users.invalid" does not resolve (ENOTFOUND)\n',
    );
  });

  it('check --resolve names a host that came from the environment by its variable', async () => {
    writeFileSync(
      join(dir, 'env.yaml'),
      'routes:\n  - { method: GET, route: /a, service: "http://${ORDERS_HOST}", path: /a }\n',
    );
    const r = await runPortico(['check', '--resolve', '--config', 'env.yaml'], {
      cwd: dir,
      env: { NODE_OPTIONS: FAKE_DNS_NODE_OPTIONS, ORDERS_HOST: 'orders-internal.invalid' },
    });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'env.yaml:2:40: routes[0].service: host "${ORDERS_HOST}" does not resolve (ENOTFOUND)\n');
  });

  it('check --resolve passes when every host resolves (IP literals are not looked up)', async () => {
    writeFileSync(
      join(dir, 'ok.yaml'),
      'routes:\n  - { method: GET, route: /a, service: "localhost:9", path: /a }\n  - { method: GET, route: /b, service: "127.0.0.1:9", path: /b }\n',
    );
    const r = await runPortico(['check', '--resolve', '--config', 'ok.yaml'], { cwd: dir });
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `ok.yaml: ok (2 routes, every host resolves)\n${DEFAULT_METRICS_LINE}`);
  });

  it('at run time the failure is logged as kind "dns", not "refused", and the client gets 502', async () => {
    const p = await startPortico(['--config', join(dir, 'dns.yaml')], { NODE_OPTIONS: FAKE_DNS_NODE_OPTIONS });
    try {
      const res = await request(`${p.url}/api/orders`);
      assert.equal(res.statusCode, 502);
      await res.body.dump();
      const line = await p.waitForLog((l) => l.msg === 'upstream error');
      assert.equal(line.kind, 'dns');
      assert.equal((line.err as { code?: string }).code, 'ENOTFOUND');
    } finally {
      p.child.kill('SIGTERM');
      await p.exited;
    }
  });
});

describe('portico routes', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'portico-routes-'));
    writeFileSync(
      join(dir, 'gateway.yaml'),
      [
        'routes:',
        '  - { method: GET, route: /chat, service: "localhost:3005", path: /chat, isWebSocket: true }',
        '  - { method: GET, route: /secure-chat, service: "https://chat.example", path: /ws, isWebSocket: true }',
        '  - { method: GET, route: /plain, service: "localhost:3000", path: /plain }',
        '',
      ].join('\n'),
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('shows a WebSocket route as WS with a ws:// or wss:// backend', async () => {
    assertPrinted(await runPortico(['routes'], { cwd: dir }), [
      'METHOD    ROUTE             BACKEND                      KIND       AUTH',
      'WS        /api/chat         ws://localhost:3005/chat     websocket  public',
      'WS        /api/secure-chat  wss://chat.example/ws        websocket  public',
      'GET,HEAD  /api/plain        http://localhost:3000/plain  standard   public',
    ]);
  });

  it('notes that HEAD on a mapped route answers the unmapped content-length', async () => {
    const r = await runPortico(['routes', '--config', 'valid.yaml'], { cwd: fixtures });
    assert.equal(r.code, 0);
    const mapped = r.stdout.split('\n').find((l) => l.includes('/api/posts'));
    assert.match(mapped ?? '', /mapping\(author\) +public +HEAD answers the backend's content-length \(unmapped\)$/);
    assert.match(r.stdout.split('\n')[0]!, / NOTE$/);
  });
});
