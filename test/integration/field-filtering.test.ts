/**
 * Field filtering (`response.allow` / `deny` / `rename` on a route) end to end with a real
 * backend: JSON objects and arrays of objects are shaped, byte for byte where kept; what is not a
 * JSON object or array of objects, not 2xx, or over `limits.maxMappingBodyBytes` passes untouched;
 * with mapping rules, the filter shapes the enriched answer. `portico check` refuses bad rules.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { loadConfigText } from '../../src/config/load.js';
import { formatProblem } from '../../src/config/problems.js';
import { closeAll } from '../support/close-all.js';

const USER =
  '{"id":12345678901234567890,"name":"Ann","password":"hunter2","address":{"city":"Porto","zip":"4000"},"roles":[{"name":"admin","grantedBy":"root"}]}';

describe('response: allow, deny, rename', () => {
  let backend: TestBackend;
  let users: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((req, res) => {
      const send = (status: number, body: string, type = 'application/json', extra: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)), ...extra });
        res.end(body);
      };
      // A backend that honours ranges: a 206 of the whole body would carry every field.
      if (req.url === '/user' && req.headers.range !== undefined) {
        const length = Buffer.byteLength(USER);
        return send(206, USER, 'application/json', { 'content-range': `bytes 0-${length - 1}/${length}` });
      }
      if (req.url === '/user') return send(200, USER, 'application/json', { etag: '"v1"' });
      if (req.url === '/users') return send(200, `[${USER},\n${USER}]`);
      if (req.url === '/text') return send(200, 'password=hunter2', 'text/plain');
      if (req.url === '/error') return send(500, '{"password":"in an error"}');
      if (req.url === '/big') return send(200, JSON.stringify({ password: 'x', pad: 'y'.repeat(4096) }));
      if (req.url === '/gzip') {
        const body = gzipSync(USER);
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        return res.end(body);
      }
      if (req.url === '/posts') return json(res, 200, [{ id: 1, authorId: 'a1', draft: true }]);
      json(res, 404, {});
    });
    users = await startBackend((req, res) => json(res, 200, { name: `user ${req.url}`, email: 'x@y' }));
    const route = (r: string, path: string, rules: string) => `
  - method: GET
    route: ${r}
    service: ${backend.host}
    path: ${path}
    response:
${rules}`;
    gw = await startGateway(`
config:
  limits:
    maxMappingBodyBytes: 2048
routes:${route('/user/public', '/user', '      allow: [id, name, address.city, roles.name]')}${route('/user/safe', '/user', '      deny: [password, address.zip]\n      rename: { name: fullName }')}${route('/users', '/users', '      deny: [password, roles]')}${route('/text', '/text', '      deny: [password]')}${route('/error', '/error', '      deny: [password]')}${route('/big', '/big', '      deny: [password]')}${route('/gzip', '/gzip', '      allow: [name]')}
  - { method: GET, route: /posts, service: ${backend.host}, path: /posts,
      mapping: [{ path: "/users/{authorId}", service: ${users.host}, tag: author, removeKeyMapping: true }],
      response: { deny: [draft, author.email] } }
`);
  });
  after(() => closeAll(gw, backend, users));

  const get = async (path: string) => {
    const res = await request(`${gw.url}/api${path}`);
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  };

  it('allow keeps only the listed fields, nested ones by dot path, numbers byte for byte', async () => {
    const r = await get('/user/public');
    assert.equal(r.status, 200);
    assert.equal(
      r.text,
      '{"id":12345678901234567890,"name":"Ann","address":{"city":"Porto"},"roles":[{"name":"admin"}]}',
    );
    assert.equal(r.headers['content-length'], String(Buffer.byteLength(r.text)));
    // The backend's validator described its bytes, not these.
    assert.equal(r.headers.etag, undefined);
  });

  it('deny drops fields and rename renames, on an object and on each item of an array', async () => {
    const one = await get('/user/safe');
    assert.deepEqual(JSON.parse(one.text.replace('12345678901234567890', '1')), {
      id: 1,
      fullName: 'Ann',
      address: { city: 'Porto' },
      roles: [{ name: 'admin', grantedBy: 'root' }],
    });
    const many = await get('/users');
    const item = '{"id":12345678901234567890,"name":"Ann","address":{"city":"Porto","zip":"4000"}}';
    assert.equal(many.text, `[${item},\n${item}]`);
  });

  it('a Range request cannot skip the filter: the range never reaches the backend', async () => {
    for (const range of ['bytes=0-', 'bytes=0-10']) {
      const res = await request(`${gw.url}/api/user/safe`, { headers: { range, 'if-range': '"v1"' } });
      const text = await res.body.text();
      assert.equal(res.statusCode, 200, range);
      assert.ok(!text.includes('hunter2'), text);
      const seen = backend.seen.at(-1)!;
      assert.equal(seen.headers.range, undefined);
      assert.equal(seen.headers['if-range'], undefined);
    }
  });

  it('a compressed JSON answer is decoded and filtered', async () => {
    const r = await get('/gzip');
    assert.equal(r.text, '{"name":"Ann"}');
    assert.equal(r.headers['content-encoding'], undefined);
  });

  it('passes untouched what it does not filter: not JSON, not 2xx, over the size limit', async () => {
    assert.equal((await get('/text')).text, 'password=hunter2');
    const error = await get('/error');
    assert.equal(error.status, 500);
    assert.equal(error.text, '{"password":"in an error"}');
    assert.match((await get('/big')).text, /"password":"x"/);
  });

  it('with mapping rules, shapes the enriched answer', async () => {
    const r = await get('/posts');
    assert.deepEqual(JSON.parse(r.text), [{ id: 1, author: { name: 'user /users/a1' } }]);
  });
});

describe('portico check: response rules', () => {
  const problems = (extra: string) => {
    const r = loadConfigText(
      `routes:
  - method: GET
    route: /items
    service: 127.0.0.1:9
    path: /items
${extra}`,
      'g.yaml',
      {},
    );
    return r.ok ? [] : r.problems.map(formatProblem);
  };

  it('refuses allow with deny, empty names in a path, two fields renamed to one', () => {
    assert.deepEqual(
      problems(`    response:
      allow: [a]
      deny: [b, c..d]
      rename: { a: x, b: x }`),
      [
        'g.yaml:8:13: routes[0].response: allow and deny exclude each other; allow keeps only what it lists, so drop deny',
        'g.yaml:8:17: routes[0].response.deny: "c..d" has an empty field name (a dot path is a.b.c)',
        'g.yaml:9:26: routes[0].response.rename: a and b are both renamed to "x"',
      ],
    );
  });

  it('refuses a streaming route and an unknown key with a did-you-mean', () => {
    const out = problems(`    isSSE: true
    response:
      alow: [a]`).join('\n');
    assert.match(out, /routes\[0\]\.response: a streaming route \(isSSE or isWebSocket\) has no JSON answer to filter/);
    assert.match(out, /unknown key "alow" \(did you mean "allow"\?\)/);
  });
});
