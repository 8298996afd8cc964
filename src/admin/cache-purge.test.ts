import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { purgeTarget } from './cache-purge.js';

describe('the target of a cache purge', () => {
  it('reads a path, an absolute URL (host lower case, target as sent), a prefix and a route', () => {
    assert.deepEqual(purgeTarget('{"url":"/api/a?b=1"}'), { kind: 'url', host: undefined, path: '/api/a?b=1' });
    assert.deepEqual(purgeTarget('{"url":"https://API.Example.com./api/%7Ea/../b?q#frag"}'), {
      kind: 'url',
      host: 'api.example.com',
      path: '/api/%7Ea/../b?q',
    });
    assert.deepEqual(purgeTarget('{"url":"http://h:8080"}'), { kind: 'url', host: 'h:8080', path: '/' });
    assert.deepEqual(purgeTarget('{"prefix":"/api/","host":"H"}'), { kind: 'prefix', host: 'h', path: '/api/' });
    assert.deepEqual(purgeTarget('{"route":"GET /a"}'), { kind: 'route', host: undefined, routeId: 'GET /a' });
  });

  it('refuses anything but one target of the right form', () => {
    for (const body of [
      '',
      'null',
      '"x"',
      '{}',
      '{"url":1}',
      '{"url":"a"}',
      '{"prefix":"a"}',
      '{"route":"a","url":"/"}',
      '{"url":"/","host":"h"}',
      '{"route":"a","host":2}',
      '{"prefix":"/","x":1}',
    ])
      assert.equal(purgeTarget(body), undefined, body);
  });
});
