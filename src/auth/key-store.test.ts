/** The API key store: lookups by digest, rotation, replacement, and the claims a key stands for. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createKeyStore } from './key-store.js';
import { compileConsumers } from '../config/consumers-file.js';

const hash = (key: string) => `sha256:${createHash('sha256').update(key).digest('hex')}`;

const consumers = compileConsumers([
  {
    id: 'acme',
    keys: [hash('old-key'), hash('new-key').toUpperCase().replace('SHA256:', 'sha256:')],
    claims: { tier: 'gold', n: 1 },
    plan: 'gold',
  },
  { id: 'globex', keys: [hash('globex-key')], claims: {}, plan: undefined },
]);

describe('createKeyStore', () => {
  it('finds each key of a consumer, an upper-case hash included (rotation)', () => {
    const store = createKeyStore(consumers);
    assert.equal(store.size, 3);
    for (const key of ['old-key', 'new-key']) assert.deepEqual(store.find(key)?.consumer, { id: 'acme', plan: 'gold' });
    assert.deepEqual(store.find('globex-key')?.consumer, { id: 'globex', plan: undefined });
  });

  it('finds nothing for an unknown key, a hash given as the key, or the empty key', () => {
    const store = createKeyStore(consumers);
    for (const key of ['nope', hash('old-key'), hash('old-key').slice('sha256:'.length), '', 'old-key '])
      assert.equal(store.find(key), undefined, key);
  });

  it("a key's holder carries the consumer's claims and their X-<claim> headers (strings only)", () => {
    const holder = createKeyStore(consumers).find('old-key')!;
    assert.deepEqual(holder.claims, { tier: 'gold', n: 1 });
    assert.deepEqual(holder.claimHeaders, [['X-tier', 'gold']]);
  });

  it('replace serves the new consumers only', () => {
    const store = createKeyStore(consumers);
    store.replace(compileConsumers([{ id: 'initech', keys: [hash('k3')], claims: {}, plan: undefined }]));
    assert.equal(store.find('old-key'), undefined);
    assert.equal(store.find('k3')?.consumer.id, 'initech');
    assert.equal(store.size, 1);
  });
});
