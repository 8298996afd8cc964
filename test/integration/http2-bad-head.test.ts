/**
 * A backend head Node's HTTP/2 refuses to send (a field HTTP/2 forbids, or one Node sends only
 * once given on several lines): the h2 client gets the gateway's 502, not a stream left hanging,
 * and the gateway keeps serving. undici's HTTP/1.1 parser takes such heads, node:http2 throws
 * when writing them (server/gateway-response.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type ClientHttp2Session } from 'node:http2';
import { h2request } from '../support/http2.js';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';

/** Bounded wait: a hanging stream fails the test instead of the run. */
function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

describe('HTTP/2: a backend head node:http2 refuses', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let session: ClientHttp2Session;
  before(async () => {
    backend = await startBackend((req, res) => {
      // Fields HTTP/1.1 allows and node:http2 refuses in a response head.
      if (req.url === '/settings') res.setHeader('http2-settings', 'AAMAAABkAARAAAAAAAIAAAAA');
      if (req.url === '/twice') res.setHeader('user-agent', ['one', 'two']);
      return json(res, 200, { ok: true });
    });
    gw = await startGateway(`
config:
  http2: { cleartext: true }
routes:
  - { method: GET, route: /settings, service: ${backend.host}, path: /settings }
  - { method: GET, route: /twice, service: ${backend.host}, path: /twice }
  - { method: GET, route: /fine, service: ${backend.host}, path: /fine }
`);
    session = connect(gw.url);
  });
  after(() => {
    session?.close();
    return closeAll(gw, backend);
  });

  for (const path of ['/settings', '/twice']) {
    it(`answers ${path} with the gateway's 502 and logs the cause with the request id`, async () => {
      const answer = await within(5_000, h2request(session, `/api${path}`));
      assert.equal(answer.status, 502);
      assert.equal(answer.headers['x-portico-error'], 'GW_UPSTREAM_BAD_RESPONSE');
      assert.deepEqual(JSON.parse(answer.body), { error: 'Backend answer could not be relayed', success: false });
      const id = answer.headers['x-request-id'];
      assert.equal(typeof id, 'string');
      const line = gw.logs.find((l) => l.reqId === id && String(l.msg).includes('head'));
      assert.ok(line, `a log line for ${String(id)}`);
    });
  }

  it('keeps serving on the same connection and on a new one', async () => {
    const same = await within(5_000, h2request(session, '/api/fine'));
    assert.equal(same.status, 200);
    const fresh = connect(gw.url);
    try {
      const answer = await within(5_000, h2request(fresh, '/api/fine'));
      assert.equal(answer.status, 200);
      assert.deepEqual(JSON.parse(answer.body), { ok: true });
    } finally {
      fresh.close();
    }
  });
});
