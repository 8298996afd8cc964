/**
 * The keys a reload compares routes by (./route-key.ts): exact JSON text where JSON keeps the
 * value, and a key that tells apart what JSON merges everywhere else.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exactKey, routeSource, sourceKey, sourceRoute } from './route-key.js';
import type { RouteConfig } from './schema.js';

const route = (extra: Record<string, unknown> = {}) =>
  ({
    method: 'GET',
    route: '/a',
    service: 'http://127.0.0.1:9',
    path: '/a',
    retries: 1,
    ...extra,
  }) as unknown as RouteConfig;

describe('route keys', () => {
  it('sends a plain route as its JSON text, which gives it back whole', () => {
    const source = routeSource(route());
    assert.equal(typeof source, 'string');
    assert.deepEqual(sourceRoute(source), route());
    assert.equal(sourceKey(source), source);
  });

  it('keeps a route whose text has null with the route itself, keyed apart from an infinite number', () => {
    const withNull = routeSource(route({ request: { schema: { maximum: null } } }));
    const withInfinity = routeSource(route({ request: { schema: { maximum: Infinity } } }));
    assert.equal(typeof withNull, 'object');
    assert.notEqual(sourceKey(withNull), sourceKey(withInfinity));
    assert.deepEqual(sourceRoute(withInfinity).request, { schema: { maximum: Infinity } });
  });

  it('tells apart NaN, the infinities, null, undefined and an absent key', () => {
    const keys = [NaN, Infinity, -Infinity, null, undefined].map((v) => exactKey({ v }));
    keys.push(exactKey({}));
    assert.equal(new Set(keys).size, keys.length);
  });

  it('tells a string that looks like a tag from the value the tag stands for', () => {
    assert.notEqual(exactKey({ v: '\u0000Infinity' }), exactKey({ v: Infinity }));
    assert.notEqual(exactKey({ v: '\u0000undefined' }), exactKey({ v: undefined }));
  });
});
