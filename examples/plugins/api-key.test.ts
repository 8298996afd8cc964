// The API-key plugin against a real gateway and a real backend, in-process (docs/plugins.md).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { testPlugin, type PluginUnderTest } from 'portico/testing';

describe('api-key', () => {
  let t: PluginUnderTest;
  before(async () => {
    t = await testPlugin({
      plugin: './examples/plugins/api-key.ts',
      options: { keys: { 'k-0123456789abcdef': 'alice' } },
    });
  });
  after(() => t.close());

  it('refuses a request without a key', async () => {
    const res = await fetch(`${t.url}/hello`);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('x-portico-error'), 'GW_AUTH_MISSING');
  });

  it('refuses an unknown key, and logs it', async () => {
    const res = await fetch(`${t.url}/hello`, { headers: { 'x-api-key': 'k-not-a-known-key!' } });
    assert.equal(res.status, 401);
    assert.ok(t.logs.some((line) => line.msg === 'unknown API key'));
  });

  it('passes a known key on as the consumer, without the key', async () => {
    const res = await fetch(`${t.url}/hello`, { headers: { 'x-api-key': 'k-0123456789abcdef' } });
    assert.equal(res.status, 200);
    const seen = t.requests.at(-1)!;
    assert.equal(seen.headers['x-consumer'], 'alice');
    assert.equal(seen.headers['x-api-key'], undefined);
  });
});
