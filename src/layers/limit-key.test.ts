import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CompiledRoute } from '../pipeline/types.js';
import { parseLimitKey } from '../config/syntax/limit-key.js';
import { fakeExchange, fakeRequest } from '../../test/support/exchanges.js';
import { compileRequestKey } from './limit-key.js';

const route = { id: 'GET /a' } as CompiledRoute;
const clientIp = () => '10.0.0.7';
const keyOf = (text: string) => compileRequestKey(parseLimitKey(text), clientIp);

describe('limit keys', () => {
  it('consumer: the consumer id, tagged; without a consumer, the client address', () => {
    const { ex } = fakeExchange(route);
    assert.equal(keyOf('consumer')(ex), '10.0.0.7');
    ex.consumer = { id: 'alice', plan: 'pro' };
    assert.equal(keyOf('consumer')(ex), 'consumer:alice');
  });

  it('claims.NAME: a string or number claim (dot paths too); absent or not an identifier, the address', () => {
    const { ex } = fakeExchange(route);
    assert.equal(keyOf('claims.sub')(ex), '10.0.0.7', 'no token');
    ex.claims = { sub: 'u-1', n: 42, flag: true, org: { id: 'acme' }, empty: '' };
    assert.equal(keyOf('claims.sub')(ex), 'claim:u-1');
    assert.equal(keyOf('claims.n')(ex), 'claim:42');
    assert.equal(keyOf('claims.org.id')(ex), 'claim:acme');
    assert.equal(keyOf('claims.flag')(ex), '10.0.0.7');
    assert.equal(keyOf('claims.org')(ex), '10.0.0.7');
    assert.equal(keyOf('claims.empty')(ex), '10.0.0.7');
  });

  it('header:NAME: the value, case-insensitive name; absent or empty, the address', () => {
    assert.equal(keyOf('header:X-Tenant')(fakeExchange(route, fakeRequest({ 'x-tenant': 'acme' })).ex), 'header:acme');
    assert.equal(keyOf('header:X-Tenant')(fakeExchange(route, fakeRequest({ 'x-tenant': '' })).ex), '10.0.0.7');
    assert.equal(keyOf('header:X-Tenant')(fakeExchange(route).ex), '10.0.0.7');
  });

  it('a long value is replaced by its hash: bounded, and still one key per value', () => {
    const long = 'x'.repeat(10_000);
    const a = keyOf('header:X-Tenant')(fakeExchange(route, fakeRequest({ 'x-tenant': long })).ex);
    const b = keyOf('header:X-Tenant')(fakeExchange(route, fakeRequest({ 'x-tenant': long + 'y' })).ex);
    assert.match(a, /^header:#[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a, b);
    const short = 'y'.repeat(64);
    assert.equal(
      keyOf('header:X-Tenant')(fakeExchange(route, fakeRequest({ 'x-tenant': short })).ex),
      `header:${short}`,
    );
  });

  it('ip: the client address whatever else the request carries', () => {
    const { ex } = fakeExchange(route);
    ex.consumer = { id: 'alice', plan: undefined };
    assert.equal(keyOf('ip')(ex), '10.0.0.7');
  });
});
