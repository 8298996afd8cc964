/**
 * Path safety under prefix routes (docs/security.md "Paths and parameters"): every spelling of a
 * dot-segment, an encoded slash or backslash, a raw backslash, an empty segment and a NUL in the
 * rest of a prefix route is refused with 400 before any backend call, over HTTP/1.1 (the bytes
 * written as they are, on a raw socket) and HTTP/2 (`:path` as sent); the same spellings in a
 * parameter before the `*` keep the parameter's own refusal. What a backend may receive is checked
 * on the request line the backend saw.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type ClientHttp2Session } from 'node:http2';
import { withRawConnection } from '../support/raw-http.js';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { h2request } from '../support/http2.js';
import { assertErrorHead } from '../support/error-answer.js';

/** Spellings of the rest of `/api/files/*` that a backend could read as another path. */
const REFUSED_REST = [
  '..',
  '.',
  '../etc/passwd',
  'a/../../etc/passwd',
  'a/./b',
  '%2e%2e/etc',
  '%2E%2E/etc',
  '%2E./etc',
  '.%2e/etc',
  'a/%2e',
  'a/%2e%2e',
  '..%2Fetc',
  'a%2Fb',
  'a%2fb',
  '%2F%2Fevil.example',
  'a%5Cb',
  'a%5cb',
  '..%5Cetc',
  'a\\b',
  '..\\etc',
  '/etc/passwd',
  'a//b',
  'a%00.txt',
  '%00',
];

describe(`prefix route path campaign (${REFUSED_REST.length} spellings, HTTP/1.1 and HTTP/2)`, () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let h2: ClientHttp2Session;
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, { url: req.url }));
    gw = await startGateway(`
config:
  http2: { cleartext: true }
routes:
  - { method: GET, route: "/files/*", service: ${backend.host}, path: "/root/files/*" }
  - { method: GET, route: "/t/{tenant}/*", service: ${backend.host}, path: "/root/{tenant}/*" }
`);
    h2 = connect(gw.url);
  });
  after(async () => {
    h2.close();
    await closeAll(gw, backend);
  });

  for (const rest of REFUSED_REST) {
    it(`400 GW_PATH_REST_INVALID, backend never called: /api/files/${rest}`, async () => {
      const before = backend.seen.length;
      const h1 = await withRawConnection(gw.port, async (conn) => {
        conn.write(`GET /api/files/${rest} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
        return conn.next();
      });
      assertErrorHead(h1, 400, 'GW_PATH_REST_INVALID');
      const two = await h2request(h2, `/api/files/${rest}`);
      assert.equal(two.status, 400);
      assert.equal(two.headers['x-portico-error'], 'GW_PATH_REST_INVALID');
      assert.equal(backend.seen.length, before);
    });
  }

  for (const tenant of ['..', '%2e%2e', '.%2E', '..%2F..', '..%5C']) {
    it(`a parameter before the * keeps its own refusal: /api/t/${tenant}/x`, async () => {
      const before = backend.seen.length;
      const two = await h2request(h2, `/api/t/${tenant}/x`);
      assert.equal(two.status, 400);
      assert.equal(two.headers['x-portico-error'], 'GW_PATH_PARAM_INVALID');
      assert.equal(backend.seen.length, before);
    });
  }

  const passed = [
    { rest: 'a..b/...', saw: '/root/files/a..b/%2E%2E%2E' },
    { rest: '.well-known/x', saw: '/root/files/.well-known/x' },
    { rest: 'a%252e%252e/b', saw: '/root/files/a%252e%252e/b' },
    { rest: '..;/admin', saw: '/root/files/..%3B/admin' },
    { rest: 'a%3Fb%23c?q=%2e%2e/..', saw: '/root/files/a%3Fb%23c?q=%2e%2e/..' },
  ];
  for (const p of passed) {
    it(`what passes stays one segment each: /api/files/${p.rest} -> ${p.saw}`, async () => {
      const two = await h2request(h2, `/api/files/${p.rest}`);
      assert.equal(two.status, 200, two.body);
      assert.equal(backend.seen.at(-1)?.url, p.saw);
    });
  }
});
