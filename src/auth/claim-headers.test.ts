import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { claimHeaders, isClaimsObject, MAX_CLAIM_VALUE_LENGTH, type SkippedClaim } from './claim-headers.js';

describe('claimHeaders', () => {
  const cases: {
    name: string;
    claims: Record<string, unknown>;
    expect: [string, string][];
    skipped: SkippedClaim[];
  }[] = [
    {
      name: 'string claims become X-<claim>, in order',
      claims: { userId: '42', username: 'ada', role: 'admin' },
      expect: [
        ['X-userId', '42'],
        ['X-username', 'ada'],
        ['X-role', 'admin'],
      ],
      skipped: [],
    },
    {
      name: 'non-string claims are not sent and not reported',
      claims: { sub: 'u1', exp: 1, admin: true, groups: ['a'], meta: { a: 1 }, nil: null },
      expect: [['X-sub', 'u1']],
      skipped: [],
    },
    { name: 'empty claims object: no headers', claims: {}, expect: [], skipped: [] },
    { name: 'empty string value is a valid header value', claims: { note: '' }, expect: [['X-note', '']], skipped: [] },
    {
      name: 'CR/LF in a value cannot inject a header',
      claims: { role: 'user\r\nX-role: admin', ok: 'y' },
      expect: [['X-ok', 'y']],
      skipped: [{ claim: 'role', reason: 'value' }],
    },
    {
      name: 'bare LF and NUL are refused too',
      claims: { a: 'x\ny', b: 'x\u0000y' },
      expect: [],
      skipped: [
        { claim: 'a', reason: 'value' },
        { claim: 'b', reason: 'value' },
      ],
    },
    {
      name: 'characters beyond Latin-1 cannot be carried',
      claims: { name: '李' },
      expect: [],
      skipped: [{ claim: 'name', reason: 'value' }],
    },
    { name: 'Latin-1 and tab are carried', claims: { name: 'Zoë\tB' }, expect: [['X-name', 'Zoë\tB']], skipped: [] },
    {
      name: 'non-token name characters',
      claims: { 'a b': 'x', 'a:b': 'x', 'a\r\nb': 'x', '': 'x', é: 'x' },
      expect: [],
      skipped: ['a b', 'a:b', 'a\r\nb', '', 'é'].map((claim) => ({ claim, reason: 'name' as const })),
    },
    {
      name: 'claims cannot forge gateway-owned headers',
      claims: { 'Request-ID': 'x', 'forwarded-for': '1.2.3.4', 'Forwarded-Proto': 'https', 'forwarded-host': 'h' },
      expect: [],
      skipped: ['Request-ID', 'forwarded-for', 'Forwarded-Proto', 'forwarded-host'].map((claim) => ({
        claim,
        reason: 'reserved' as const,
      })),
    },
    {
      name: 'claims cannot produce a method override or a header only a trusted proxy may send, in either spelling',
      claims: {
        'HTTP-Method-Override': 'DELETE',
        'Real-IP': '1.2.3.4',
        Real_IP: '1.2.3.4',
        Forwarded_For: '1',
        'Original-URL': '/a',
      },
      expect: [],
      skipped: ['HTTP-Method-Override', 'Real-IP', 'Real_IP', 'Forwarded_For', 'Original-URL'].map((claim) => ({
        claim,
        reason: 'reserved' as const,
      })),
    },
    {
      name: 'names equal once `_` is read as `-` give one header (the first)',
      claims: { preferred_username: 'a', 'preferred-username': 'b' },
      expect: [['X-preferred_username', 'a']],
      skipped: [{ claim: 'preferred-username', reason: 'duplicate' }],
    },
    {
      name: 'names equal case-insensitively give one header (the first)',
      claims: { role: 'a', Role: 'b' },
      expect: [['X-role', 'a']],
      skipped: [{ claim: 'Role', reason: 'duplicate' }],
    },
    {
      name: 'overlong values are skipped',
      claims: { big: 'x'.repeat(MAX_CLAIM_VALUE_LENGTH + 1), fits: 'y'.repeat(MAX_CLAIM_VALUE_LENGTH) },
      expect: [['X-fits', 'y'.repeat(MAX_CLAIM_VALUE_LENGTH)]],
      skipped: [{ claim: 'big', reason: 'too-long' }],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const skipped: SkippedClaim[] = [];
      assert.deepEqual(claimHeaders(c.claims, skipped), c.expect);
      assert.deepEqual(skipped, c.skipped);
    });
  }

  it("cannot take the configuration's client-certificate subject header", () => {
    const skipped: SkippedClaim[] = [];
    const claims = { 'Client-Subject': 'CN=admin', Client_Subject: 'CN=admin', sub: 'alice' };
    assert.deepEqual(claimHeaders(claims, skipped, 'X-Client-Subject'), [['X-sub', 'alice']]);
    assert.deepEqual(
      skipped.map((s) => s.reason),
      ['reserved', 'reserved'],
    );
  });

  it('works without a skipped list', () => {
    assert.deepEqual(claimHeaders({ 'a b': 'x', c: 'd' }), [['X-c', 'd']]);
  });
});

describe('isClaimsObject', () => {
  for (const [value, expected] of [
    [{}, true],
    [{ a: 1 }, true],
    [[], false],
    [null, false],
    ['x', false],
    [1, false],
    [undefined, false],
  ] as const) {
    it(`${JSON.stringify(value) ?? 'undefined'} -> ${expected}`, () => assert.equal(isClaimsObject(value), expected));
  }
});
