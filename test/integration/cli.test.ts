/**
 * The CLI as a user drives it: `portico check` golden files (test/fixtures/check/<case>.yaml and
 * the exact stderr in <case>.stderr), `routes`, usage errors and a missing file.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertPrinted, DEFAULT_METRICS_LINE, ROOT, runPortico } from '../support/cli-run.js';

const fixtures = `${ROOT}test/fixtures/check/`;

describe('portico check: golden files', () => {
  const cases = readdirSync(fixtures)
    .filter((f) => f.endsWith('.stderr'))
    .map((f) => f.slice(0, -'.stderr'.length));
  it('has golden cases', () => assert.ok(cases.length >= 10));
  for (const name of cases) {
    it(name, async () => {
      const r = await runPortico(['check', '--config', `${name}.yaml`], { cwd: fixtures });
      assert.equal(r.stderr, readFileSync(`${fixtures}${name}.stderr`, 'utf8'));
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
    });
  }

  it('a valid file exits 0', async () => {
    const r = await runPortico(['check', '--config', 'valid.yaml'], { cwd: fixtures });
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `valid.yaml: ok (3 routes)\n${DEFAULT_METRICS_LINE}`);
    assert.equal(r.stderr, '');
  });

  it('a missing file is one clear line, no stack trace', async () => {
    const r = await runPortico(['check', '--config', 'nope.yaml'], { cwd: fixtures });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `nope.yaml:1:1: file not found: ${join(fixtures, 'nope.yaml')} (write one with "portico init", or name another with --config FILE)\n`,
    );
  });

  it('an empty route list passes with a warning, not silently', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'portico-empty-'));
    writeFileSync(join(dir, 'gateway.yaml'), 'routes: []\n');
    const r = await runPortico(['check'], { cwd: dir });
    assert.equal(r.code, 0);
    assert.equal(
      r.stderr,
      'gateway.yaml:1:9: warning: routes: the list is empty; every request will get 404 GW_ROUTE_NOT_FOUND (add a route, or run portico init for a commented example)\n',
    );
  });

  it('PORTICO_CONFIG names the file when --config is absent', async () => {
    const r = await runPortico(['check'], { cwd: fixtures, env: { PORTICO_CONFIG: 'valid.yaml' } });
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `valid.yaml: ok (3 routes)\n${DEFAULT_METRICS_LINE}`);
  });

  it('./gateway.yaml is the default', async () => {
    const r = await runPortico(['check'], { cwd: fixtures });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^gateway\.yaml:1:1: file not found: \/.*\/gateway\.yaml \(write one with "portico init"/);
  });

  it('start without a configuration names the absolute path it looked for and what to do', async () => {
    const r = await runPortico(['start'], { cwd: fixtures });
    assert.equal(r.code, 1);
    assert.ok(
      r.stderr.startsWith(
        `gateway.yaml:1:1: file not found: ${join(fixtures, 'gateway.yaml')} (write one with "portico init"`,
      ),
      r.stderr,
    );
  });
});

describe('portico routes and usage', () => {
  it('prints the route table', async () => {
    assertPrinted(await runPortico(['routes', '--config', 'valid.yaml'], { cwd: fixtures }), [
      'METHOD    ROUTE                           BACKEND                                            KIND             AUTH    NOTE',
      "GET,HEAD  /api/posts                      https://posts.example/posts                        mapping(author)  public  HEAD answers the backend's content-length (unmapped)",
      'GET,HEAD  /api/ticker                     http://localhost:3002/ticker                       sse              jwt',
      'GET,HEAD  /api/company/{companyId}/users  http://localhost:3000/users?companyId={companyId}  standard         jwt',
    ]);
  });

  it('prints prefix and host routes in the order the router tries them, with their hosts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'portico-routes-'));
    writeFileSync(
      join(dir, 'gateway.yaml'),
      `routes:
  - { method: GET, route: "/static/*", service: localhost:3000, path: "/files/*", public: true }
  - { method: GET, route: "/static/css/*", service: localhost:3000, path: "/css/*", public: true }
  - { method: GET, route: "/users/{id}", service: localhost:3000, path: "/users/{id}", public: true }
  - { method: GET, route: "/users", service: localhost:3001, path: "/users", hosts: [api.example.com, "*.example.com"], public: true }
`,
    );
    assertPrinted(await runPortico(['routes'], { cwd: dir }), [
      'METHOD    HOSTS                          ROUTE              BACKEND                           KIND      AUTH',
      'GET,HEAD  api.example.com,*.example.com  /api/users         http://localhost:3001/users       standard  public',
      'GET,HEAD  *                              /api/users/{id}    http://localhost:3000/users/{id}  standard  public',
      'GET,HEAD  *                              /api/static/css/*  http://localhost:3000/css/*       standard  public',
      'GET,HEAD  *                              /api/static/*      http://localhost:3000/files/*     standard  public',
    ]);
  });

  it('an unknown command exits 2 with usage', async () => {
    const r = await runPortico(['serve']);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^portico: unknown command "serve" \(expected start, check, routes, status, token, key or init\)\n\nUsage: portico <command>/,
    );
  });

  it('--help exits 0 with usage', async () => {
    const r = await runPortico(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: portico <command> \[options\]/);
  });

  it('start refuses an invalid file with exit 1 and every problem', async () => {
    const r = await runPortico(['start', '--config', 'unknown-keys.yaml'], { cwd: fixtures });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `${readFileSync(`${fixtures}unknown-keys.stderr`, 'utf8')}portico: refusing to start: 4 problem(s) in unknown-keys.yaml\n`,
    );
  });

  it('an invalid port is a usage error', async () => {
    const r = await runPortico(['start', '--port', 'http']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'portico: invalid --port "http": expected a port number from 0 to 65535\n');
  });
});
