import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_MESSAGE_BYTES,
  MAX_VALUE_CHARS,
  boundedTarget,
  decodeMessage,
  encodeMessage,
  invalidationTargets,
} from './broadcast-message.js';
import type { PurgeTarget } from './purge.js';

const FROM = 'replica-a';

describe('the cache broadcast message', () => {
  it('carries the sender and every kind of target, read back as sent', () => {
    const targets: PurgeTarget[] = [
      { kind: 'url', host: 'api.example.test', path: '/items/1?x=1' },
      { kind: 'url', host: undefined, path: '/items/2' },
      { kind: 'prefix', host: undefined, path: '/items/' },
      { kind: 'route', host: 'api.example.test', routeId: 'GET /items/{id}' },
    ];
    const raw = encodeMessage(FROM, 'purge', targets);
    assert.ok(raw.length < 300, `small: ${raw.length} bytes`);
    assert.deepEqual(decodeMessage(raw), { from: FROM, cause: 'purge', targets });
    const invalidation = encodeMessage(FROM, 'invalidation', targets.slice(0, 1));
    assert.deepEqual(decodeMessage(invalidation), { from: FROM, cause: 'invalidation', targets: targets.slice(0, 1) });
  });

  it('turns the primary keys of an invalidation into exact URL targets', () => {
    assert.deepEqual(invalidationTargets(['api.example.test\u0000/items/1', '\u0000/bare']), [
      { kind: 'url', host: 'api.example.test', path: '/items/1' },
      { kind: 'url', host: '', path: '/bare' },
    ]);
  });

  it('bounds every value: a longer one becomes a shorter prefix, which drops as much or more', () => {
    const long = '/a'.repeat(MAX_VALUE_CHARS);
    assert.deepEqual(boundedTarget({ kind: 'url', host: 'h', path: long }), {
      kind: 'prefix',
      host: 'h',
      path: long.slice(0, MAX_VALUE_CHARS),
    });
    const longHost = 'h'.repeat(300);
    assert.deepEqual(boundedTarget({ kind: 'url', host: longHost, path: '/x' }), {
      kind: 'prefix',
      host: undefined,
      path: '/x',
    });
    assert.deepEqual(boundedTarget({ kind: 'route', host: 'h', routeId: 'GET /'.padEnd(MAX_VALUE_CHARS + 1, 'x') }), {
      kind: 'prefix',
      host: 'h',
      path: '',
    });
    // The worst case the sender can make still fits the bound the receiver enforces.
    const worst = Array.from({ length: 4 }, () =>
      boundedTarget({ kind: 'url', host: '"'.repeat(255), path: '\\'.repeat(9999) }),
    );
    assert.ok(encodeMessage('x'.repeat(64), 'invalidation', worst).length <= MAX_MESSAGE_BYTES);
  });

  it('ignores what is not a well-formed message', () => {
    const good = '{"v":1,"from":"a","cause":"purge","targets":[{"kind":"url","host":null,"path":"/x"}]}';
    assert.ok(decodeMessage(Buffer.from(good)), 'each case below breaks one part of this one');
    const bad = [
      '',
      'not json',
      '[]',
      'null',
      '{"v":1,"from":"a","cause":"other","targets":[{"kind":"url","host":null,"path":"/x"}]}',
      '{"v":2,"from":"a","cause":"purge","targets":[{"kind":"url","host":null,"path":"/x"}]}',
      '{"v":1,"cause":"purge","targets":[{"kind":"url","host":null,"path":"/x"}]}',
      '{"v":1,"from":"","cause":"purge","targets":[{"kind":"url","host":null,"path":"/x"}]}',
      '{"v":1,"from":"a","cause":"purge","targets":[]}',
      '{"v":1,"from":"a","cause":"purge","targets":[{"kind":"all"}]}',
      '{"v":1,"from":"a","cause":"purge","targets":[{"kind":"url","host":null}]}',
      '{"v":1,"from":"a","cause":"purge","targets":[{"kind":"url","host":3,"path":"/x"}]}',
      '{"v":1,"from":"a","cause":"purge","targets":[{"kind":"route","host":null,"path":"/x"}]}',
      `{"v":1,"from":"a","cause":"purge","targets":[${Array(5).fill('{"kind":"url","host":null,"path":"/x"}').join(',')}]}`,
      `{"v":1,"from":"a","cause":"purge","targets":[{"kind":"url","host":null,"path":"${'x'.repeat(MAX_VALUE_CHARS + 1)}"}]}`,
    ];
    for (const text of bad) assert.equal(decodeMessage(Buffer.from(text)), undefined, text.slice(0, 80));
    assert.equal(decodeMessage(Buffer.alloc(MAX_MESSAGE_BYTES + 1, 0x20)), undefined, 'too large: not even parsed');
  });
});
