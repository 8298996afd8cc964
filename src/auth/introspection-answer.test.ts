/** How an introspection answer's body is read (RFC 7662 2.2), with the JWT-like checks beside it. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readIntrospectionAnswer, type AnswerChecks } from './introspection-answer.js';
import { basicCredentials } from './introspection.js';

const NOW = 1_700_000_000;
const PLAIN: AnswerChecks = { issuer: undefined, audience: undefined, clockToleranceSec: 0 };

function read(body: string, checks: AnswerChecks = PLAIN) {
  return readIntrospectionAnswer(Buffer.from(body), checks, NOW);
}

function codeOf(body: string, checks?: AnswerChecks): string {
  const verdict = read(body, checks);
  return verdict.active ? 'active' : (verdict.refusal.code ?? '?');
}

describe('readIntrospectionAnswer', () => {
  it('an active answer admits, its fields become the claims', () => {
    const verdict = read(
      `{"active":true,"sub":"u1","scope":"read write","client_id":"app","exp":${NOW + 60},"tenant":"t9"}`,
    );
    assert.ok(verdict.active);
    assert.deepEqual(verdict.claims, {
      active: true,
      sub: 'u1',
      scope: 'read write',
      client_id: 'app',
      exp: NOW + 60,
      tenant: 't9',
    });
  });

  const table = [
    { name: 'inactive', body: '{"active":false}', code: 'GW_AUTH_INVALID' },
    { name: 'inactive with other fields', body: '{"active":false,"sub":"u1"}', code: 'GW_AUTH_INVALID' },
    { name: 'active with exp now', body: `{"active":true,"exp":${NOW}}`, code: 'GW_AUTH_INVALID' },
    { name: 'not JSON', body: '<html>oops</html>', code: 'GW_AUTH_UNAVAILABLE' },
    { name: 'empty', body: '', code: 'GW_AUTH_UNAVAILABLE' },
    { name: 'an array', body: '[{"active":true}]', code: 'GW_AUTH_UNAVAILABLE' },
    { name: 'no active', body: '{"sub":"u1"}', code: 'GW_AUTH_UNAVAILABLE' },
    { name: 'active as a string', body: '{"active":"true"}', code: 'GW_AUTH_UNAVAILABLE' },
    { name: 'exp as a string', body: '{"active":true,"exp":"soon"}', code: 'GW_AUTH_UNAVAILABLE' },
  ];
  for (const t of table)
    it(`${t.name}: ${t.code}`, () => {
      assert.equal(codeOf(t.body), t.code);
    });

  it('an inactive token is refused with WWW-Authenticate invalid_token; an unusable answer is a 503', () => {
    const inactive = read('{"active":false}');
    assert.ok(!inactive.active);
    assert.equal(inactive.refusal.status, 401);
    assert.match(inactive.refusal.headers['www-authenticate'] ?? '', /error="invalid_token"/);
    const garbage = read('nope');
    assert.ok(!garbage.active);
    assert.equal(garbage.refusal.status, 503);
  });

  it('clockToleranceSec admits an exp just past, as for a JWT', () => {
    assert.equal(codeOf(`{"active":true,"exp":${NOW - 5}}`, { ...PLAIN, clockToleranceSec: 10 }), 'active');
    assert.equal(codeOf(`{"active":true,"exp":${NOW - 10}}`, { ...PLAIN, clockToleranceSec: 10 }), 'GW_AUTH_INVALID');
  });

  it('checks iss and aud when config.auth.issuer and audience are set', () => {
    const checks: AnswerChecks = { issuer: ['https://idp'], audience: 'orders', clockToleranceSec: 0 };
    assert.equal(codeOf('{"active":true,"iss":"https://idp","aud":"orders"}', checks), 'active');
    assert.equal(codeOf('{"active":true,"iss":"https://idp","aud":["x","orders"]}', checks), 'active');
    assert.equal(codeOf('{"active":true,"iss":"https://other","aud":"orders"}', checks), 'GW_AUTH_INVALID');
    assert.equal(codeOf('{"active":true,"iss":"https://idp","aud":"billing"}', checks), 'GW_AUTH_INVALID');
    assert.equal(codeOf('{"active":true,"iss":"https://idp"}', checks), 'GW_AUTH_INVALID');
  });
});

describe('basicCredentials (RFC 6749 2.3.1)', () => {
  it('form-encodes the id and secret before joining them', () => {
    const header = basicCredentials('my app', 'p@ss:w/rd+');
    const decoded = Buffer.from(header.slice('Basic '.length), 'base64').toString();
    assert.equal(decoded, 'my+app:p%40ss%3Aw%2Frd%2B');
  });
});
