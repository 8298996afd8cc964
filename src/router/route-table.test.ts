import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from '../config/load.js';
import { compileRoutes } from '../pipeline/compile-route.js';
import { createRouteTable } from './route-table.js';

function table(yaml: string) {
  const r = loadConfigText(yaml, 'g.yaml', {});
  assert.ok(r.ok);
  return createRouteTable(compileRoutes(r.config).routes.map((route) => ({ route, run: async () => {} })));
}

describe('route table', () => {
  const t = table(`routes:
  - { method: GET, route: "/users/{id}", service: s, path: "/u/{id}" }
  - { method: PUT, route: "/users/{id}", service: s, path: "/u/{id}" }
  - { method: GET, route: "/files/{name}.{ext}", service: s, path: "/f/{name}/{ext}" }
  - { method: GET, route: "/time:now", service: s, path: "/t" }
  - { method: HEAD, route: "/ping", service: s, path: "/ping-head" }
  - { method: GET, route: "/ping", service: s, path: "/ping" }
`);
  it('matches methods and decodes parameters', () => {
    const m = t.match('GET', '/api/users/a%20b');
    assert.equal(m.kind, 'found');
    assert.ok(m.kind === 'found');
    assert.equal(m.entry.route.id, 'GET /users/{id}');
    assert.deepEqual({ ...m.params }, { id: 'a b' });
  });
  it('supports several parameters in one segment and literal colons', () => {
    const m = t.match('GET', '/api/files/report.pdf');
    assert.ok(m.kind === 'found');
    assert.deepEqual({ ...m.params }, { name: 'report', ext: 'pdf' });
    assert.equal(t.match('GET', '/api/time:now').kind, 'found');
  });
  it('answers HEAD from the GET route unless a HEAD route exists', () => {
    const m = t.match('HEAD', '/api/users/1');
    assert.ok(m.kind === 'found');
    assert.equal(m.entry.route.method, 'GET');
    const p = t.match('HEAD', '/api/ping');
    assert.ok(p.kind === 'found');
    assert.equal(p.entry.route.method, 'HEAD');
  });
  it('405 lists the allowed methods; 404 otherwise', () => {
    assert.deepEqual(t.match('DELETE', '/api/users/1'), { kind: 'method-not-allowed', allow: 'GET, PUT, HEAD' });
    assert.deepEqual(t.match('GET', '/api/users/1/x'), { kind: 'not-found' });
    assert.deepEqual(t.match('GET', '/users/1'), { kind: 'not-found' });
    assert.deepEqual(t.match('GET', '/api/users/'), { kind: 'not-found' });
  });
});
