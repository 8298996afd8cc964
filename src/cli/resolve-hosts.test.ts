import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from '../config/load.js';
import { parseConfigText } from '../config/parse.js';
import { resolveProblems } from './resolve-hosts.js';

const text = `routes:
  - { method: GET, route: /a, service: "api.internal:8080", path: /a }
  - { method: GET, route: /b, service: "10.0.0.7:80", path: /b }
  - { method: GET, route: /c, service: "[::1]:80", path: /c }
  - { method: GET, route: /d, service: "api.internal:9090", path: /d }
config:
  auth:
    jwksUrl: https://idp.example/keys
`;

function compiled() {
  const loaded = loadConfigText(text, 'gw.yaml', {});
  assert.ok(loaded.ok);
  return { config: loaded.config, locate: parseConfigText(text, 'gw.yaml', {}).locate };
}

describe('check --resolve', () => {
  it('looks each distinct name up once, never an IP literal, and reports every place using a failing name', async () => {
    const { config, locate } = compiled();
    const asked: string[] = [];
    const problems = await resolveProblems(config, locate, async (host) => {
      asked.push(host);
      if (host === 'api.internal') throw Object.assign(new Error('x'), { code: 'ENOTFOUND' });
    });
    assert.deepEqual(asked.sort(), ['api.internal', 'idp.example']);
    assert.deepEqual(
      problems.map((p) => `${p.line}:${p.col} ${p.message}`),
      [
        '2:40 routes[0].service: host "api.internal" does not resolve (ENOTFOUND)',
        '5:40 routes[3].service: host "api.internal" does not resolve (ENOTFOUND)',
      ],
    );
  });

  it('a resolver that does not answer is a problem after the timeout, not a hang', async () => {
    const { config, locate } = compiled();
    const started = Date.now();
    const problems = await resolveProblems(
      config,
      locate,
      (host) => (host === 'idp.example' ? new Promise(() => {}) : Promise.resolve()),
      50,
    );
    assert.ok(Date.now() - started < 5_000);
    assert.deepEqual(
      problems.map((p) => p.message),
      ['config.auth.jwksUrl: host "idp.example" does not resolve (no answer from the resolver within 0.05 s)'],
    );
    assert.equal(problems[0]!.line, 8);
  });

  it('looks the Redis host up too', async () => {
    const yaml = 'routes: []\nconfig:\n  redis:\n    url: redis://:pw@cache.internal:6379\n';
    const loaded = loadConfigText(yaml, 'gw.yaml', {});
    assert.ok(loaded.ok);
    const problems = await resolveProblems(loaded.config, parseConfigText(yaml, 'gw.yaml', {}).locate, async () => {
      throw Object.assign(new Error('x'), { code: 'ENOTFOUND' });
    });
    assert.deepEqual(
      problems.map((p) => `${p.line}:${p.col} ${p.message}`),
      ['4:10 config.redis.url: host "cache.internal" does not resolve (ENOTFOUND)'],
    );
  });
});
