/**
 * Request validation (`request.schema`) end to end: a JSON Schema from a file and one written
 * inline, against a real backend. A body that fails never reaches the backend; one that passes
 * arrives byte for byte, a chunked one with its length.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { loadConfigText } from '../../src/config/load.js';
import { formatProblem } from '../../src/config/problems.js';

const ORDER_SCHEMA = {
  type: 'object',
  required: ['sku', 'quantity'],
  additionalProperties: false,
  properties: {
    sku: { type: 'string', pattern: '^[A-Z]{3}-[0-9]+$' },
    quantity: { type: 'integer', minimum: 1 },
    email: { type: 'string', format: 'email' },
  },
};

describe('request.schema', () => {
  let dir: string;
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'portico-schema-'));
    writeFileSync(join(dir, 'order.json'), JSON.stringify(ORDER_SCHEMA));
    backend = await startBackend((req, res, body) =>
      json(res, 200, { got: body.toString('utf8'), length: req.headers['content-length'] ?? null }),
    );
    gw = await startGateway(`
routes:
  - method: POST
    route: /orders
    service: ${backend.host}
    path: /orders
    request:
      schema: ${join(dir, 'order.json')}
      maxBytes: 2048
  - method: PUT
    route: /tags
    service: ${backend.host}
    path: /tags
    request:
      schema:
        $schema: https://json-schema.org/draft/2020-12/schema
        type: array
        items: { type: string }
        maxItems: 3
`);
  });
  after(async () => {
    await gw.close();
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const send = async (
    path: string,
    body: string | Readable | undefined,
    headers: Record<string, string> = { 'content-type': 'application/json' },
    method: 'POST' | 'PUT' = 'POST',
  ) => {
    const res = await request(`${gw.url}/api${path}`, { method, headers, body });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) as unknown };
  };
  const ordersSeen = () => backend.seen.filter((r) => r.url === '/orders').length;

  it('a body that matches reaches the backend byte for byte', async () => {
    const body = '{ "sku": "ABC-12", "quantity": 2 }';
    const r = await send('/orders', body);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json(), { got: body, length: String(body.length) });
  });

  it('a body that does not match: 400 with the failures and their JSON pointers, backend not called', async () => {
    const before = ordersSeen();
    const r = await send('/orders', '{"sku":"abc","quantity":0,"email":"nope","extra":true}');
    assert.equal(r.status, 400);
    assert.equal(r.headers['x-portico-error'], 'GW_REQUEST_INVALID');
    const body = r.json() as { error: string; success: boolean; errors: { pointer: string; message: string }[] };
    assert.equal(body.success, false);
    assert.deepEqual(
      body.errors.map((e) => e.pointer),
      ['/extra', '/sku', '/quantity', '/email'],
    );
    assert.match(body.error, /^Request body does not match the route's schema: \/extra is not allowed$/);
    assert.equal(ordersSeen(), before);
  });

  it('a missing property is pointed at', async () => {
    const r = await send('/orders', '{"sku":"ABC-1"}');
    assert.equal(r.status, 400);
    assert.deepEqual((r.json() as { errors: unknown }).errors, [{ pointer: '/quantity', message: 'is required' }]);
  });

  it('not JSON: malformed 400, wrong content type or encoded 415, no body 400, too large 413', async () => {
    const before = ordersSeen();
    const malformed = await send('/orders', '{"sku":');
    assert.equal(malformed.status, 400);
    assert.deepEqual(malformed.json(), { error: 'Request body is not valid JSON', success: false });
    assert.equal(
      (await send('/orders', 'sku=ABC-1', { 'content-type': 'application/x-www-form-urlencoded' })).status,
      415,
    );
    assert.equal(
      (await send('/orders', '{}', { 'content-type': 'application/json', 'content-encoding': 'gzip' })).status,
      415,
    );
    assert.equal((await send('/orders', undefined, {})).status, 400);
    const big = JSON.stringify({ sku: 'ABC-1', quantity: 1, email: `${'x'.repeat(3000)}@example.com` });
    assert.equal((await send('/orders', big)).status, 413);
    assert.equal(ordersSeen(), before, 'none of them reached the backend');
  });

  it('a vendor +json type and a chunked body are accepted; the backend gets a length', async () => {
    const body = '{"sku":"XYZ-9","quantity":5}';
    const r = await send('/orders', Readable.from([Buffer.from(body.slice(0, 10)), Buffer.from(body.slice(10))]), {
      'content-type': 'application/vnd.shop.order+json; charset=utf-8',
    });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json(), { got: body, length: String(body.length) });
  });

  it('an inline draft 2020-12 schema', async () => {
    assert.equal((await send('/tags', '["a","b"]', undefined, 'PUT')).status, 200);
    const r = await send('/tags', '["a",1,"c","d"]', undefined, 'PUT');
    assert.equal(r.status, 400);
    assert.deepEqual(
      (r.json() as { errors: { pointer: string }[] }).errors.map((e) => e.pointer),
      ['', '/1'],
    );
  });
});

describe('portico check: request.schema', () => {
  const check = (yaml: string) => {
    const r = loadConfigText(yaml, join(tmpdir(), 'gw.yaml'), {});
    return r.ok ? [] : r.problems.map((p) => formatProblem(p).replace(`${tmpdir()}/`, ''));
  };
  const route = (request: string, extra = '') => `routes:
  - method: POST
    route: /a
    service: localhost:3000
    path: /a
${extra}    request:
${request}`;

  it('a schema file that is missing, at its line', () => {
    const [problem, ...rest] = check(route('      schema: ./no-such-schema.json\n'));
    assert.deepEqual(rest, []);
    assert.match(
      problem!,
      /^gw\.yaml:7:15: routes\[0\]\.request\.schema: cannot read "\.\/no-such-schema\.json" as JSON: ENOENT/,
    );
  });

  it('an invalid JSON Schema', () => {
    const [problem, ...rest] = check(route('      schema: { type: nonsense }\n'));
    assert.deepEqual(rest, []);
    assert.match(problem!, /^gw\.yaml:7:15: routes\[0\]\.request\.schema: not a valid JSON Schema: schema is invalid/);
  });

  it('requestBuffering: false, and a streaming route', () => {
    assert.deepEqual(check(route('      schema: { type: object }\n', '    requestBuffering: false\n')), [
      'gw.yaml:6:23: routes[0].requestBuffering: false streams the body to the backend, so request.schema cannot check it first',
    ]);
    assert.deepEqual(check(route('      schema: { type: object }\n', '    isSSE: true\n')), [
      'gw.yaml:8:7: routes[0].request: a streaming route (isSSE or isWebSocket) cannot validate bodies',
    ]);
  });
});
