/**
 * What the logs never hold (docs/security.md): a path's query string (it may carry a token), and
 * the credentials or query of a URL from the configuration, which may have come from the
 * environment (a JWKS endpoint, the auth service's path, the OTLP collector). Each case runs the
 * real component, captures its log lines and looks for the secret in every one of them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { captureLogger, type LogLine } from '../support/capture-logger.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { adminRequest } from '../support/admin.js';
import { withRawConnection } from '../support/raw-http.js';
import { waitFor } from '../support/wait-for.js';
import { createEventBus } from '../../src/observability/events.js';
import { createAdmin } from '../../src/admin/listener.js';
import { loadConfigText } from '../../src/config/load.js';
import { createHash } from 'node:crypto';

/** A JWT whose header asks for an RS256 key by `kid`: verifying it needs the JWKS endpoint. */
const RS256_TOKEN = [{ alg: 'RS256', kid: 'k1' }, { sub: 'alice' }]
  .map((part) => Buffer.from(JSON.stringify(part)).toString('base64url'))
  .concat('c2lnbmF0dXJl')
  .join('.');

/** Asserts that no log line holds any of `secrets`, and returns the lines with message `msg`. */
function linesWithout(logs: readonly LogLine[], secrets: readonly string[], msg: string): LogLine[] {
  for (const line of logs) {
    const text = JSON.stringify(line);
    for (const secret of secrets) assert.ok(!text.includes(secret), `${secret} logged: ${text}`);
  }
  return logs.filter((l) => l.msg === msg);
}

describe('URLs from the configuration are logged without credentials or query', () => {
  const gateways: TestGateway[] = [];
  after(() => Promise.all(gateways.map((g) => g.close())));

  it('a JWKS endpoint that fails: the warning and each refusal name it redacted', async () => {
    const env = { JWKS_URL: 'http://127.0.0.1:1/keys?api_key=jwks-k3y' };
    const gw = await startGateway(
      'routes:\n  - { method: GET, route: /a, service: "127.0.0.1:1", path: /a }\nconfig:\n  auth: { jwksUrl: "${JWKS_URL}", defaultProtected: true }\n',
      env,
    );
    gateways.push(gw);
    const res = await gw.get('/api/a', { headers: { authorization: `Bearer ${RS256_TOKEN}` } });
    assert.equal(res.status, 503);
    const warned = linesWithout(gw.logs, ['jwks-k3y'], 'auth refused');
    assert.match(String(warned[0]?.detail), /JWKS endpoint http:\/\/127\.0\.0\.1:1\/keys\?\*\*\* unavailable/);
  });

  it("the auth service's path with a query: the unreachable warning names it redacted", async () => {
    const gw = await startGateway(
      'routes:\n  - { method: GET, route: /a, service: "127.0.0.1:1", path: /a }\nconfig:\n  auth: { authService: "127.0.0.1:1", authPath: "/validate?key=${AUTH_KEY}", defaultProtected: true }\n',
      { AUTH_KEY: 'auth-k3y' },
    );
    gateways.push(gw);
    const res = await gw.get('/api/a', { headers: { authorization: 'Bearer anything' } });
    assert.equal(res.status, 503);
    const [line] = linesWithout(gw.logs, ['auth-k3y'], 'auth service unreachable');
    assert.equal(line?.url, 'http://127.0.0.1:1/validate?***');
  });

  it('an OTLP collector that fails: the export warning names it redacted', async () => {
    const gw = await startGateway(
      'routes:\n  - { method: GET, route: /a, service: "127.0.0.1:1", path: /a, public: true }\nconfig:\n  telemetry: { otlpEndpoint: "${OTLP}" }\n',
      { OTLP: 'http://otel-user:otel-s3cr3t@127.0.0.1:1' },
    );
    assert.ok(await gw.gateway.spanExporter(), 'the exporter started');
    assert.equal((await gw.get('/api/a')).status, 502);
    // Closing sends the queued span, which fails at once: the connection is refused.
    await gw.close();
    const [line] = linesWithout(gw.logs, ['otel-s3cr3t', 'otel-user'], 'OTLP export failed; spans dropped');
    assert.equal(line?.url, 'http://***@127.0.0.1:1/v1/traces');
  });
});

function failing(): never {
  throw new Error('status source failed');
}

describe('API keys are never logged (docs/consumers.md)', () => {
  const KEY = 'pk_a-key-that-must-never-be-logged';
  const WRONG = 'pk_a-wrong-key-that-must-never-be-logged';
  let gw: TestGateway;
  before(async () => {
    const hash = createHash('sha256').update(KEY).digest('hex');
    gw = await startGateway(
      [
        'routes:',
        '  - { method: GET, route: /closed, service: "127.0.0.1:1", path: /closed, protected: true }',
        '  - { method: GET, route: /open, service: "127.0.0.1:1", path: /open, public: true }',
        'consumers:',
        `  - { id: acme, keys: ["sha256:${hash}"] }`,
        'config:',
        '  auth: { apiKey: { header: X-API-Key, query: api_key } }',
        '',
      ].join('\n'),
    );
  });
  after(() => gw?.close());

  it('accepted, refused, ambiguous and public requests: no line holds a key', async () => {
    assert.equal((await gw.get('/api/closed', { headers: { 'x-api-key': KEY } })).status, 502);
    assert.equal((await gw.get(`/api/closed?api_key=${KEY}`)).status, 502);
    assert.equal((await gw.get(`/api/closed?api_key=${WRONG}`)).status, 401);
    assert.equal((await gw.get('/api/closed', { headers: { 'x-api-key': WRONG } })).status, 401);
    assert.equal((await gw.get(`/api/closed?api_key=${KEY}`, { headers: { 'x-api-key': KEY } })).status, 400);
    assert.equal((await gw.get(`/api/open?api_key=${KEY}`, { headers: { 'x-api-key': KEY } })).status, 502);
    await waitFor(() => gw.logs.filter((l) => l.msg === 'request').length >= 6);
    const requests = linesWithout(gw.logs, [KEY, WRONG], 'request');
    assert.equal(requests.length, 6);
    assert.equal(linesWithout(gw.logs, [KEY, WRONG], 'auth refused').length, 3);
  });
});

describe('paths are logged without their query', () => {
  const TOKEN = 'q-t0ken-in-the-query';
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway(
      [
        'routes:',
        '  - { method: GET, route: /open, service: "127.0.0.1:1", path: /open, public: true }',
        '  - { method: GET, route: /closed, service: "127.0.0.1:1", path: /closed }',
        'config:',
        '  auth: { secret: "${JWT_SECRET}", defaultProtected: true }',
        '',
      ].join('\n'),
      { JWT_SECRET: 'a-secret-of-at-least-thirty-two-bytes!' },
    );
  });
  after(() => gw?.close());

  it('the access log, the upstream error, the auth refusal and a Host refusal', async () => {
    assert.equal((await gw.get(`/api/open?access_token=${TOKEN}`)).status, 502);
    assert.equal((await gw.get(`/api/closed?access_token=${TOKEN}`)).status, 401);
    assert.equal((await gw.get(`/api/nothing?access_token=${TOKEN}`)).status, 404);
    const refused = await withRawConnection(gw.port, async (conn) => {
      conn.write(`GET /api/open?access_token=${TOKEN} HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n`);
      return conn.next();
    });
    assert.equal(refused.status, 400);
    await waitFor(() => gw.logs.filter((l) => l.msg === 'request').length >= 4);
    const requests = linesWithout(gw.logs, [TOKEN], 'request');
    assert.deepEqual(requests.map((l) => l.path).sort(), ['/api/closed', '/api/nothing', '/api/open', '/api/open']);
    assert.equal(linesWithout(gw.logs, [TOKEN], 'upstream error').length, 1);
    assert.equal(linesWithout(gw.logs, [TOKEN], 'auth refused').length, 1);
  });

  it("the admin listener's failure log", async () => {
    const loaded = loadConfigText('routes: []\nconfig:\n  admin: { port: 0 }\n', 'admin.yaml', {});
    assert.ok(loaded.ok);
    const { logger, lines } = captureLogger();
    const admin = createAdmin({
      settings: loaded.config.settings.admin!,
      events: createEventBus(),
      logger,
      // Status sources that fail stand for any bug behind the API.
      sources: {
        config: () => loaded.config,
        circuits: failing,
        targets: failing,
        mappingCache: failing,
        inFlight: { count: 0 },
      },
    });
    try {
      const { port } = await admin.listen();
      const res = await adminRequest(port, '/api/status?access_token=admin-t0ken');
      assert.equal(res.status, 500);
      const [line] = linesWithout(lines, ['admin-t0ken'], 'admin listener failed to answer');
      assert.equal(line?.path, '/api/status');
    } finally {
      await admin.close();
    }
  });
});
