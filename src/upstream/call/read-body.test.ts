import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { decodeBody, isJsonContentType, MAX_DECODE_RATIO, readLimited, utf8Text } from './read-body.js';

describe('decodeBody', () => {
  const plain = Buffer.from('{"a":"é"}');
  const cases: [string, Buffer][] = [
    ['gzip', gzipSync(plain)],
    ['x-gzip', gzipSync(plain)],
    ['br', brotliCompressSync(plain)],
    ['deflate', deflateSync(plain)],
    ['deflate', deflateRawSync(plain)],
    ['identity', plain],
  ];
  for (const [encoding, raw] of cases) {
    it(`decodes ${encoding}`, async () => assert.deepEqual(await decodeBody(raw, encoding, 1000), plain));
  }
  it('undoes several codings in reverse order', async () => {
    assert.deepEqual(await decodeBody(brotliCompressSync(gzipSync(plain)), 'gzip, br', 1000), plain);
  });
  it('returns the body itself without Content-Encoding', async () =>
    assert.equal(await decodeBody(plain, undefined, 1000), plain));
  it('undefined for unknown codings, corrupt data, or output past the limit', async () => {
    assert.equal(await decodeBody(plain, 'zstd', 1000), undefined);
    assert.equal(await decodeBody(plain, 'gzip', 1000), undefined);
    assert.equal(await decodeBody(gzipSync(Buffer.alloc(5000)), 'gzip', 4999), undefined);
  });
  it('undefined for a body that would grow more than MAX_DECODE_RATIO times, however high the limit', async () => {
    const bomb = gzipSync(Buffer.alloc(2_000_000, 0x20));
    assert.ok(bomb.length * MAX_DECODE_RATIO < 2_000_000, `${bomb.length} bytes compressed`);
    assert.equal(await decodeBody(bomb, 'gzip', 100_000_000), undefined);
    const json = Buffer.from(JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `n${i}` }))));
    assert.deepEqual(await decodeBody(gzipSync(json), 'gzip', 100_000_000), json);
  });
});

describe('readLimited', () => {
  it('reads a body up to the limit', async () => {
    const r = await readLimited(Readable.from([Buffer.from('ab'), Buffer.from('cd')]), 4);
    assert.deepEqual(
      { text: Buffer.concat(r.chunks).toString(), size: r.size, overflow: r.overflow },
      { text: 'abcd', size: 4, overflow: false },
    );
  });
  it('stops past the limit and leaves the rest readable', async () => {
    const stream = Readable.from([Buffer.from('ab'), Buffer.from('cd'), Buffer.from('ef')]);
    const r = await readLimited(stream, 3);
    assert.equal(r.overflow, true);
    assert.equal(Buffer.concat(r.chunks).toString(), 'abcd');
    const rest: Buffer[] = [];
    for await (const c of stream) rest.push(c as Buffer);
    assert.equal(Buffer.concat(rest).toString(), 'ef');
  });
});

describe('isJsonContentType', () => {
  it('JSON media types, or none at all', () => {
    for (const t of [
      undefined,
      'application/json',
      'Application/JSON; charset=utf-8',
      'application/problem+json',
      'text/json',
    ])
      assert.equal(isJsonContentType(t), true, t);
    for (const t of ['text/plain', 'text/html', 'application/jsonp', 'application/x-ndjson'])
      assert.equal(isJsonContentType(t), false, t);
  });
});

describe('utf8Text', () => {
  it('refuses invalid UTF-8 instead of replacing it', () => {
    assert.equal(utf8Text(Buffer.from([0x22, 0xff, 0x22])), undefined);
    assert.equal(utf8Text(Buffer.from('"é"')), '"é"');
  });
});
