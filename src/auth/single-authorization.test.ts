import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { Authenticator } from './types.js';
import { hasSeveralAuthorization, refuseSeveralAuthorization } from './single-authorization.js';

describe('hasSeveralAuthorization', () => {
  const cases: [string[], boolean][] = [
    [[], false],
    [['Authorization', 'Bearer a'], false],
    [['Host', 'x', 'authorization', 'Bearer a', 'Accept', '*/*'], false],
    [['authorization', 'Bearer a', 'Authorization', 'Bearer b'], true],
    [['AUTHORIZATION', 'Bearer a', 'x-other', 'v', 'aUtHoRiZaTiOn', ''], true],
    [['Proxy-Authorization', 'Basic x', 'Authorization', 'Bearer a'], false],
    [['X-Authorization', 'a', 'Authorization', 'Bearer a'], false],
  ];
  for (const [raw, expected] of cases)
    it(JSON.stringify(raw), () => assert.equal(hasSeveralAuthorization(raw), expected));
});

describe('refuseSeveralAuthorization', () => {
  it('refuses before the wrapped authenticator runs; passes single headers through', async () => {
    let calls = 0;
    const inner: Authenticator = { authenticate: async () => (calls++, { ok: true, claimHeaders: [] }) };
    const a = refuseSeveralAuthorization(inner);
    const req = (rawHeaders: string[]) => ({ rawHeaders, headers: {} }) as unknown as IncomingMessage;
    const refused = await a.authenticate(req(['Authorization', 'a', 'authorization', 'b']), 'r');
    assert.equal(calls, 0);
    assert.equal(refused.ok, false);
    if (!refused.ok) {
      assert.equal(refused.status, 400);
      assert.equal(refused.code, 'GW_AUTH_AMBIGUOUS');
      assert.equal(refused.headers['x-portico-error'], 'GW_AUTH_AMBIGUOUS');
      assert.deepEqual(JSON.parse(refused.body.toString()), { error: 'Several Authorization headers', success: false });
    }
    assert.deepEqual(await a.authenticate(req(['Authorization', 'a']), 'r'), { ok: true, claimHeaders: [] });
    assert.equal(calls, 1);
    assert.equal(a.close, undefined);
  });
});
