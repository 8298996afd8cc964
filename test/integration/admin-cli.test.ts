/**
 * `portico status` (docs/dashboard.md) as a user types it, against a running gateway with an admin
 * listener: found from the configuration or `--admin`, the token from the configuration or
 * `$PORTICO_ADMIN_TOKEN`, and one line saying what is wrong when it cannot answer.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedPort, json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { runPortico } from '../support/cli-run.js';

const TOKEN = 'a-token-for-portico-status';

describe('portico status', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let dir: string;
  let file: string;
  let adminUrl: string;

  before(async () => {
    backend = await startBackend((req, res) => json(res, req.url === '/broken' ? 502 : 200, {}));
    const port = await closedPort();
    const yaml = `
routes:
  - { method: GET, route: /users, service: ${backend.host}, path: /users }
  - { method: GET, route: /broken, service: ${backend.host}, path: /broken }
config:
  admin:
    port: ${port}
    token: ${TOKEN}
`;
    dir = mkdtempSync(join(tmpdir(), 'portico-status-'));
    file = join(dir, 'gateway.yaml');
    writeFileSync(file, yaml);
    gw = await startGateway(yaml);
    adminUrl = `http://127.0.0.1:${gw.gateway.adminAddress()!.port}`;
    for (let i = 0; i < 3; i++) await gw.get('/api/users');
    await gw.get('/api/broken', { headers: { 'x-request-id': 'broken-1' } });
  });
  after(async () => {
    await gw.close();
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds the admin listener and its token in the configuration, and prints the summary', async () => {
    const run = await runPortico(['status', '--config', file]);
    assert.equal(run.stderr, '');
    assert.equal(run.code, 0);
    assert.match(run.stdout, /^Portico \d+\.\d+\.\d+\S*, up \d+ s \(pid \d+\), \d+ in flight\n/);
    assert.match(run.stdout, /\nConfig test\.yaml; last reload: none since the start\n/);
    assert.match(run.stdout, /\nROUTE +BACKEND +AUTH +REQ\/S +2XX +4XX +5XX +P50 MS +P99 MS\n/);
    assert.match(run.stdout, new RegExp(`\\nGET,HEAD /api/users +${backend.url}/users +public +`));
    assert.match(run.stdout, new RegExp(`\\n${backend.url} +closed +`));
    assert.match(
      run.stdout,
      /\nLast errors \(1 of the last 1\):\n\S+Z +502 +BACKEND_5XX +GET \/api\/broken +broken-1\n/,
    );
  });

  it('takes --admin URL and $PORTICO_ADMIN_TOKEN, and says when the token is missing', async () => {
    const refused = await runPortico(['status', '--admin', adminUrl]);
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr,
      `portico: the admin listener at ${adminUrl} wants its token: set $PORTICO_ADMIN_TOKEN (or give --config with config.admin.token)\n`,
    );
    const ok = await runPortico(['status', '--admin', `${adminUrl}/`], { env: { PORTICO_ADMIN_TOKEN: TOKEN } });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^Portico /);
  });

  it('prints no control character that a served document holds (no terminal escapes)', async () => {
    const res = await fetch(`${adminUrl}/api/status`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const doc = (await res.json()) as { errors: { path: string }[] };
    doc.errors[0]!.path = '/broken\u001b[2J\u009b31m';
    const forged = await startBackend((_req, r) => json(r, 200, doc));
    try {
      const run = await runPortico(['status', '--admin', forged.url], { env: { PORTICO_ADMIN_TOKEN: TOKEN } });
      assert.equal(run.code, 0, run.stderr);
      // eslint-disable-next-line no-control-regex -- matching control characters is the point
      assert.doesNotMatch(run.stdout, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
      assert.match(run.stdout, /GET \/broken\?\[2J\?31m /);
    } finally {
      await forged.close();
    }
  });

  it('says when nothing answers, when the configuration has no admin listener, and when the URL is not one', async () => {
    const port = await closedPort();
    const down = await runPortico(['status', '--admin', `http://127.0.0.1:${port}`]);
    assert.equal(down.code, 1);
    assert.equal(down.stderr, `portico: cannot reach the admin listener at http://127.0.0.1:${port}: ECONNREFUSED\n`);
    const plain = join(dir, 'plain.yaml');
    writeFileSync(plain, `routes:\n  - method: GET\n    route: /a\n    service: ${backend.host}\n    path: /a\n`);
    const none = await runPortico(['status', '--config', plain]);
    assert.equal(none.code, 1);
    assert.equal(
      none.stderr,
      `portico: ${plain} has no config.admin: the gateway has no admin listener (or give --admin URL)\n`,
    );
    const usage = await runPortico(['status', '--admin', 'localhost:9901']);
    assert.equal(usage.code, 2);
    assert.match(
      usage.stderr,
      /^portico: --admin localhost:9901: expected a URL such as http:\/\/127\.0\.0\.1:9901\n$/,
    );
  });
});
