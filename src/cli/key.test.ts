/** `portico key`: a fresh key each time, whose printed hash is the one the key store accepts. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { keyHash, newApiKey } from './key.js';
import { createKeyStore } from '../auth/key-store.js';
import { compileConsumers } from '../config/consumers-file.js';
import { KEY_HASH } from '../config/schema.js';

describe('newApiKey', () => {
  it('a pk_ key of 256 random bits, and a hash the configuration accepts', () => {
    const { key, hash } = newApiKey();
    assert.match(key, /^pk_[A-Za-z0-9_-]{43}$/);
    assert.match(hash, KEY_HASH);
    assert.notEqual(newApiKey().key, key);
  });

  it('the key store finds the consumer listing the printed hash', () => {
    const { key, hash } = newApiKey();
    const store = createKeyStore(compileConsumers([{ id: 'acme', keys: [hash], claims: {}, plan: undefined }]));
    assert.equal(store.find(key)?.consumer.id, 'acme');
  });

  it('the hash of a known key matches sha256sum of its bytes', () => {
    // printf %s abc | sha256sum
    assert.equal(keyHash('abc'), 'sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
