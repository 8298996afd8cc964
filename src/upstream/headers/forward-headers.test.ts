import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  UpstreamFramingError,
  downstreamHeadersFromRaw,
  downstreamResponseHeaders,
  headerNamesFromUndici,
} from './forward-headers.js';
import { rawHeaderList } from '../../../test/support/raw-headers.js';

/** undici's raw response list: names and values as Buffers, in wire order and case. */
const raw = (...pairs: string[]): Buffer[] => pairs.map((p) => Buffer.from(p, 'latin1'));

describe('downstreamHeadersFromRaw', () => {
  it('lower-cases names and drops hop-by-hop headers and the backend request id', () => {
    const out = downstreamHeadersFromRaw(
      raw(
        ...rawHeaderList(`
          Content-Type: application/json
          Connection: keep-alive
          Keep-Alive: timeout=5
          Transfer-Encoding: chunked
          X-Request-ID: backend-id
          X-Custom: a
        `),
      ),
    );
    assert.deepEqual(out, { 'content-type': 'application/json', 'x-custom': 'a' });
  });

  it('turns repeated names into arrays in wire order', () => {
    const out = downstreamHeadersFromRaw(
      raw('Set-Cookie', 'a=1', 'set-cookie', 'b=2', 'SET-COOKIE', 'c=3', 'Vary', 'Accept'),
    );
    assert.deepEqual(out, { 'set-cookie': ['a=1', 'b=2', 'c=3'], vary: 'Accept' });
  });

  it('keeps one line of a one-value field (the first; a list field joined), which HTTP/2 can send', () => {
    const out = downstreamHeadersFromRaw(
      raw(
        'Age',
        '7200',
        'age',
        '0',
        'Content-Encoding',
        'gzip',
        'content-encoding',
        'br',
        'ETag',
        '"a"',
        'etag',
        '"b"',
      ),
    );
    assert.deepEqual(out, { age: '7200', 'content-encoding': 'gzip, br', etag: '"a"' });
    assert.deepEqual(downstreamResponseHeaders({ age: ['7200', '0'], 'content-language': ['en', 'de'] }), {
      age: '7200',
      'content-language': 'en, de',
    });
  });

  it('drops the headers the Connection header names, across repeated Connection headers', () => {
    const out = downstreamHeadersFromRaw(
      raw(
        ...rawHeaderList(`
          Connection: X-Hop-One
          x-hop-one: 1
          Connection: keep-alive, X-Hop-Two
          X-Hop-Two: 2
          X-Kept: 3
        `),
      ),
    );
    assert.deepEqual(out, { 'x-kept': '3' });
  });

  it('never lets a __proto__ header touch the object prototype', () => {
    const out = downstreamHeadersFromRaw(raw('__proto__', 'x', 'Etag', '"1"'));
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.keys(out), ['etag']);
  });

  it('keeps latin1 bytes as they came (what undici and Node send on)', () => {
    const out = downstreamHeadersFromRaw([Buffer.from('X-Name'), Buffer.from([0x63, 0x61, 0x66, 0xe9])]);
    assert.deepEqual(out, { 'x-name': 'caf\u00e9' });
  });

  it('agrees with the rules for parsed headers', () => {
    const list = raw('Content-Length', '2', 'Connection', 'close', 'Date', 'now', 'Cache-Control', 'no-store');
    assert.deepEqual(
      downstreamHeadersFromRaw(list),
      downstreamResponseHeaders({
        'content-length': '2',
        connection: 'close',
        date: 'now',
        'cache-control': 'no-store',
      }),
    );
  });

  it("finds undici's header-name reader (an undici upgrade that moves it is noticed here)", () => {
    assert.equal(typeof headerNamesFromUndici, 'function');
    assert.equal(headerNamesFromUndici?.(Buffer.from('Content-Type')), 'content-type');
  });

  it('refuses a Transfer-Encoding other than exactly chunked (its body would be read to the close)', () => {
    for (const te of ['chunked', 'Chunked', ' chunked '])
      assert.doesNotThrow(() => downstreamHeadersFromRaw(raw('Transfer-Encoding', te)), te);
    for (const te of ['xchunked', 'gzip, chunked', '"chunked"', 'chunked, chunked', 'identity']) {
      assert.throws(() => downstreamHeadersFromRaw(raw('Transfer-Encoding', te)), UpstreamFramingError, te);
    }
  });
});
