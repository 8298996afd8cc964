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
    const m = t.match('GET', '/api/users/a%20b', undefined);
    assert.equal(m.kind, 'found');
    assert.ok(m.kind === 'found');
    assert.equal(m.entry.route.id, 'GET /users/{id}');
    assert.deepEqual({ ...m.params }, { id: 'a b' });
  });
  it('supports several parameters in one segment and literal colons', () => {
    const m = t.match('GET', '/api/files/report.pdf', undefined);
    assert.ok(m.kind === 'found');
    assert.deepEqual({ ...m.params }, { name: 'report', ext: 'pdf' });
    assert.equal(t.match('GET', '/api/time:now', undefined).kind, 'found');
  });
  it('answers HEAD from the GET route unless a HEAD route exists', () => {
    const m = t.match('HEAD', '/api/users/1', undefined);
    assert.ok(m.kind === 'found');
    assert.equal(m.entry.route.method, 'GET');
    const p = t.match('HEAD', '/api/ping', undefined);
    assert.ok(p.kind === 'found');
    assert.equal(p.entry.route.method, 'HEAD');
  });
  it('405 lists the allowed methods; 404 otherwise', () => {
    assert.deepEqual(t.match('DELETE', '/api/users/1', undefined), {
      kind: 'method-not-allowed',
      allow: 'GET, PUT, HEAD',
    });
    assert.deepEqual(t.match('GET', '/api/users/1/x', undefined), { kind: 'not-found' });
    assert.deepEqual(t.match('GET', '/users/1', undefined), { kind: 'not-found' });
    assert.deepEqual(t.match('GET', '/api/users/', undefined), { kind: 'not-found' });
  });
});

describe('prefix routes', () => {
  const t = table(`routes:
  - { method: GET, route: "/static/*", service: s, path: "/files/*" }
  - { method: GET, route: "/static/css/*", service: s, path: "/css/*" }
  - { method: GET, route: "/static/readme", service: s, path: "/readme" }
  - { method: GET, route: "/static/{name}.txt", service: s, path: "/txt/{name}" }
  - { method: POST, route: "/static/*", service: s, path: "/upload/*" }
  - { method: GET, route: "/t/{tenant}/docs/*", service: s, path: "/docs/{tenant}/*" }
  - { method: GET, route: "/a/{x}/c", service: s, path: "/ac/{x}" }
  - { method: GET, route: "/a/b/*", service: s, path: "/ab/*" }
`);
  const found = (method: string, path: string) => {
    const m = t.match(method, path, undefined);
    assert.ok(m.kind === 'found', `${method} ${path}: ${m.kind}`);
    return { id: m.entry.route.id, params: { ...m.params } };
  };
  it('owns the paths below its prefix on segment boundaries, never the prefix itself or /staticx', () => {
    assert.deepEqual(found('GET', '/api/static/a/b.js'), { id: 'GET /static/*', params: { '*': 'a/b.js' } });
    assert.deepEqual(found('GET', '/api/static/'), { id: 'GET /static/*', params: { '*': '' } });
    assert.deepEqual(found('GET', '/api/static/dir/'), { id: 'GET /static/*', params: { '*': 'dir/' } });
    assert.equal(t.match('GET', '/api/static', undefined).kind, 'not-found');
    assert.equal(t.match('GET', '/api/staticx', undefined).kind, 'not-found');
    assert.equal(t.match('GET', '/api/staticx/a', undefined).kind, 'not-found');
  });
  it('exact, then parameter, then the longest prefix', () => {
    assert.equal(found('GET', '/api/static/readme').id, 'GET /static/readme');
    assert.equal(found('GET', '/api/static/notes.txt').id, 'GET /static/{name}.txt');
    assert.equal(found('GET', '/api/static/css/site.css').id, 'GET /static/css/*');
    assert.equal(found('GET', '/api/static/cssx').id, 'GET /static/*');
    assert.equal(found('GET', '/api/static/readme/more').id, 'GET /static/*');
    // A parameter route beats a prefix even where the prefix has a literal segment the parameter has not.
    assert.equal(found('GET', '/api/a/b/c').id, 'GET /a/{x}/c');
    assert.equal(found('GET', '/api/a/b/d').id, 'GET /a/b/*');
  });
  it('parameters before the *, and the rest re-encoded segment by segment', () => {
    assert.deepEqual(found('GET', '/api/t/acme/docs/a%20b/c;d'), {
      id: 'GET /t/{tenant}/docs/*',
      params: { tenant: 'acme', '*': 'a%20b/c%3Bd' },
    });
    assert.deepEqual(found('GET', '/api/static/%7Euser/%C3%A9'), {
      id: 'GET /static/*',
      params: { '*': '~user/%C3%A9' },
    });
  });
  it('refuses an ambiguous rest: dot segments, encoded slashes and backslashes, empty segments, NUL', () => {
    for (const path of [
      '/api/static/..',
      '/api/static/.',
      '/api/static/a/../b',
      '/api/static/a/%2e%2e/b',
      '/api/static/%2E.',
      '/api/static/.%2E/x',
      '/api/static/a%2Fb',
      '/api/static/a%2fb',
      '/api/static/a%5Cb',
      '/api/static/a\\b',
      '/api/static//etc',
      '/api/static/a//b',
      '/api/static/a%00b',
    ]) {
      assert.deepEqual(t.match('GET', path, undefined), { kind: 'bad-path' }, path);
    }
    // A malformed escape matches no route at all: the router refuses it before any rest is read.
    assert.deepEqual(t.match('GET', '/api/static/%E0%A4%A', undefined), { kind: 'not-found' });
    assert.deepEqual(t.match('GET', '/api/t/..%2F/docs/x', undefined), { kind: 'bad-parameter', param: 'tenant' });
    // A value longer than the walk reads code by code: its `.` is found past the first 16 codes.
    assert.deepEqual(t.match('GET', '/api/t/aaaaaaaaaaaaaaaaaaaa%2F../docs/x', undefined), {
      kind: 'bad-parameter',
      param: 'tenant',
    });
    assert.equal(found('GET', '/api/static/a..b/...x/.hidden').params['*'], 'a..b/...x/.hidden');
  });
  it('405 lists the methods of exact and prefix routes', () => {
    assert.deepEqual(t.match('DELETE', '/api/static/x', undefined), {
      kind: 'method-not-allowed',
      allow: 'GET, POST, HEAD',
    });
    assert.equal(found('HEAD', '/api/static/x').id, 'GET /static/*');
  });
});

describe('host routing', () => {
  const t = table(`routes:
  - { method: GET, route: /users, service: s, path: /api-users, hosts: [api.example.com] }
  - { method: GET, route: /users, service: s, path: /tenant-users, hosts: ["*.example.com"] }
  - { method: GET, route: /users, service: s, path: /default-users }
  - { method: GET, route: /only-api, service: s, path: /o, hosts: ["API.Example.com.", "[::1]", 10.0.0.1] }
  - { method: GET, route: /files/*, service: s, path: /f/*, hosts: [files.example.com] }
`);
  const path = (host: string | undefined, p = '/api/users') => {
    const m = t.match('GET', p, host);
    return m.kind === 'found' ? m.entry.route.path.source : m.kind;
  };
  it('an exact host, then a wildcard of one label, then the routes without hosts', () => {
    assert.equal(path('api.example.com'), '/api-users');
    assert.equal(path('API.EXAMPLE.COM:8443'), '/api-users');
    assert.equal(path('api.example.com.'), '/api-users');
    assert.equal(path('a.example.com'), '/tenant-users');
    assert.equal(path('a.b.example.com'), '/default-users');
    assert.equal(path('example.com'), '/default-users');
    assert.equal(path(undefined), '/default-users');
  });
  it('a host route serves only its hosts; an IPv6 or IPv4 literal is a host', () => {
    assert.equal(path('api.example.com', '/api/only-api'), '/o');
    assert.equal(path('[::1]:8080', '/api/only-api'), '/o');
    assert.equal(path('10.0.0.1', '/api/only-api'), '/o');
    assert.equal(path('a.example.com', '/api/only-api'), 'not-found');
    assert.equal(path('files.example.com', '/api/files/x'), '/f/*');
    assert.equal(path('files.example.com', '/api/users'), '/tenant-users');
  });
  it('answers by the Host header as sent, past the few headers it remembers', () => {
    const many = table(
      'routes:\n' +
        Array.from(
          { length: 20 },
          (_, i) => `  - { method: GET, route: /who, service: s, path: /h${i}, hosts: [h${i}.example.com] }\n`,
        ).join('') +
        '  - { method: GET, route: /who, service: s, path: /any }\n',
    );
    const who = (host: string) => {
      const m = many.match('GET', '/api/who', host);
      return m.kind === 'found' ? m.entry.route.path.source : m.kind;
    };
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < 20; i++) {
        assert.equal(who(`h${i}.example.com`), `/h${i}`);
        assert.equal(who(`H${i}.EXAMPLE.COM:8080`), `/h${i}`);
        assert.equal(who(`x${i}.example.com`), '/any');
      }
  });
  it('404 GW_HOST_NOT_FOUND when every route names its hosts and none is this one', () => {
    const only = table(`routes:
  - { method: GET, route: /users, service: s, path: /u, hosts: [api.example.com] }
`);
    assert.equal(only.match('GET', '/api/users', 'api.example.com').kind, 'found');
    assert.deepEqual(only.match('GET', '/api/users', 'other.example.com'), { kind: 'host-not-found' });
    assert.deepEqual(only.match('GET', '/api/nope', 'api.example.com'), { kind: 'not-found' });
  });
  it("the first group with a route answers: a host's own prefix takes even a path a route for every host has", () => {
    const t2 = table(`routes:
  - { method: GET, route: "/*", service: s, path: "/site/*", hosts: [www.example.com] }
  - { method: POST, route: /forms, service: s, path: /forms, hosts: [www.example.com] }
  - { method: GET, route: /users, service: s, path: /users }
  - { method: DELETE, route: /forms, service: s, path: /forms }
`);
    const m = t2.match('GET', '/api/users', 'www.example.com');
    assert.ok(m.kind === 'found');
    assert.equal(m.entry.route.path.source, '/site/*');
    const other = t2.match('GET', '/api/users', 'example.com');
    assert.ok(other.kind === 'found');
    assert.equal(other.entry.route.path.source, '/users');
    const del = t2.match('DELETE', '/api/forms', 'www.example.com');
    assert.ok(del.kind === 'found');
    assert.equal(del.entry.route.path.source, '/forms');
    assert.deepEqual(t2.match('PUT', '/api/forms', 'www.example.com'), {
      kind: 'method-not-allowed',
      allow: 'GET, POST, DELETE, HEAD',
    });
  });
});

describe('segment tree', () => {
  const t = table(`routes:
  - { method: GET, route: "/users/{id}", service: s, path: "/u/{id}" }
  - { method: GET, route: "/users/me", service: s, path: "/me" }
  - { method: GET, route: "/users/{id}/posts/{post}", service: s, path: "/p/{id}/{post}" }
  - { method: GET, route: "/users/me/posts/latest", service: s, path: "/latest" }
  - { method: GET, route: "/files/{name}.{ext}", service: s, path: "/f/{name}/{ext}" }
  - { method: GET, route: "/files/{name}.txt", service: s, path: "/t/{name}" }
  - { method: GET, route: "/v{version}/status", service: s, path: "/s/{version}" }
  - { method: GET, route: "/café", service: s, path: "/cafe" }
`);
  const found = (path: string) => {
    const m = t.match('GET', path, undefined);
    assert.ok(m.kind === 'found', `${path}: ${m.kind}`);
    return { path: m.entry.route.path.source, params: { ...m.params } };
  };
  it('an exact path answers with one shared match: nothing is allocated per request', () => {
    const a = t.match('GET', '/api/users/me', undefined);
    assert.ok(a.kind === 'found');
    assert.equal(t.match('GET', '/api/users/me', undefined), a);
    assert.deepEqual({ ...a.params }, {});
  });
  it('backtracks from a literal segment to a parameter when the literal branch ends nowhere', () => {
    assert.deepEqual(found('/api/users/me/posts/7'), { path: '/p/{id}/{post}', params: { id: 'me', post: '7' } });
    assert.deepEqual(found('/api/users/me/posts/latest'), { path: '/latest', params: {} });
    assert.deepEqual(found('/api/users/you/posts/latest'), {
      path: '/p/{id}/{post}',
      params: { id: 'you', post: 'latest' },
    });
  });
  it('parameters inside a segment: the last "." ends the name, a literal suffix first', () => {
    assert.deepEqual(found('/api/files/a.b.pdf'), { path: '/f/{name}/{ext}', params: { name: 'a.b', ext: 'pdf' } });
    assert.deepEqual(found('/api/files/notes.txt'), { path: '/t/{name}', params: { name: 'notes' } });
    assert.deepEqual(found('/api/v2/status'), { path: '/s/{version}', params: { version: '2' } });
    assert.equal(t.match('GET', '/api/files/.pdf', undefined).kind, 'not-found');
    assert.equal(t.match('GET', '/api/v/status', undefined).kind, 'not-found');
  });
  it('matches literal segments on the decoded path and decodes parameters once', () => {
    assert.deepEqual(found('/api/%75sers/me'), { path: '/me', params: {} });
    assert.deepEqual(found('/api/caf%C3%A9'), { path: '/cafe', params: {} });
    assert.deepEqual(found('/api/users/a%2Fb%25c'), { path: '/u/{id}', params: { id: 'a/b%c' } });
    assert.equal(t.match('GET', '/api/users%2Fme', undefined).kind, 'not-found');
    assert.equal(t.match('GET', '/api/users/%E0%A4%A', undefined).kind, 'not-found');
  });
  it('refuses a parameter longer than 2,048 characters; the absolute form routes on its path', () => {
    assert.equal(found(`/api/users/${'x'.repeat(2048)}`).params.id?.length, 2048);
    assert.equal(t.match('GET', `/api/users/${'x'.repeat(2049)}`, undefined).kind, 'not-found');
    assert.deepEqual(found('http://example.com/api/users/7'), { path: '/u/{id}', params: { id: '7' } });
    assert.equal(t.match('GET', '*', undefined).kind, 'not-found');
  });
});

describe('one walk for every method', () => {
  const t = table(`routes:
  - { method: GET, route: "/users/{id}", service: s, path: "/u/{id}" }
  - { method: POST, route: "/users/*", service: s, path: "/upload/*" }
  - { method: GET, route: "/users/me/posts/latest", service: s, path: "/latest" }
  - { method: POST, route: "/users/{id}/posts/{post}", service: s, path: "/p/{id}/{post}" }
  - { method: GET, route: "/a/b", service: s, path: "/ab" }
  - { method: PUT, route: "/a/{x}", service: s, path: "/ax/{x}" }
  - { method: POST, route: "/a/*", service: s, path: "/a-all/*" }
  - { method: GET, route: "/items/{id}", service: s, path: "/items-get/{id}" }
  - { method: HEAD, route: "/items/{key}", service: s, path: "/items-head/{key}" }
  - { method: GET, route: "/s/{a}/*", service: s, path: "/s/{a}/*" }
  - { method: GET, route: "/{b}/{c}/z", service: s, path: "/bcz/{b}/{c}" }
`);
  const found = (method: string, path: string) => {
    const m = t.match(method, path, undefined);
    assert.ok(m.kind === 'found', `${method} ${path}: ${m.kind}`);
    return { path: m.entry.route.path.source, params: { ...m.params } };
  };
  it('an empty parameter matches nothing: 405 when a route of another method takes the path (spec: "the path matches but not the method"), else 404', () => {
    // GET /users/{id} does not take /users/ (the backend would get another path), POST /users/* does.
    assert.deepEqual(t.match('GET', '/api/users/', undefined), { kind: 'method-not-allowed', allow: 'POST' });
    assert.deepEqual(found('POST', '/api/users/'), { path: '/upload/*', params: { '*': '' } });
    assert.deepEqual(t.match('GET', '/api/items/', undefined), { kind: 'not-found' });
  });
  it("a method's walk passes over the branches of the other methods' routes", () => {
    assert.deepEqual(found('POST', '/api/users/me/posts/latest'), {
      path: '/p/{id}/{post}',
      params: { id: 'me', post: 'latest' },
    });
    assert.deepEqual(found('GET', '/api/users/me/posts/latest'), { path: '/latest', params: {} });
    assert.deepEqual(t.match('GET', '/api/users/me/posts/7', undefined), {
      kind: 'method-not-allowed',
      allow: 'POST',
    });
  });
  it("405's Allow gathers literal, parameter and prefix routes in one walk, for any method", () => {
    const allow = 'GET, POST, PUT, HEAD';
    assert.deepEqual(t.match('DELETE', '/api/a/b', undefined), { kind: 'method-not-allowed', allow });
    assert.deepEqual(t.match('FOO', '/api/a/b', undefined), { kind: 'method-not-allowed', allow });
    assert.deepEqual(t.match('DELETE', '/api/a/c', undefined), { kind: 'method-not-allowed', allow: 'POST, PUT' });
    assert.deepEqual(t.match('DELETE', '/api/a/c/d', undefined), { kind: 'method-not-allowed', allow: 'POST' });
  });
  it('answers 404 and each 405 with one shared object', () => {
    assert.equal(t.match('DELETE', '/api/a/b', undefined), t.match('PATCH', '/api/a/b', undefined));
    assert.equal(t.match('GET', '/api/nothing', undefined), t.match('GET', '/api/none/here', undefined));
  });
  it('a HEAD route takes its path from the HEAD of a GET route written before it, whatever its parameter names', () => {
    assert.deepEqual(found('HEAD', '/api/items/1'), { path: '/items-head/{key}', params: { key: '1' } });
    assert.deepEqual(found('GET', '/api/items/1'), { path: '/items-get/{id}', params: { id: '1' } });
  });
  it('a prefix route keeps the values of its own branch when the walk goes on in another', () => {
    // /s/{a}/* is met first; then /{b}/{c}/z is tried with b = "s", and fails at "bar".
    assert.deepEqual(found('GET', '/api/s/foo/bar'), { path: '/s/{a}/*', params: { a: 'foo', '*': 'bar' } });
    assert.deepEqual(found('GET', '/api/s/foo/z'), { path: '/bcz/{b}/{c}', params: { b: 's', c: 'foo' } });
  });
});
