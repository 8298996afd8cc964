import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chooseEncoding, createEncodingChooser, parseAcceptEncoding } from './accept-encoding.js';

const ALL = ['zstd', 'br', 'gzip'] as const;

describe('Accept-Encoding negotiation (RFC 9110 12.5.3)', () => {
  it('the client q-values decide; on a tie the gateway order does', () => {
    assert.equal(chooseEncoding('gzip, deflate, br, zstd', ALL), 'zstd');
    assert.equal(chooseEncoding('gzip, deflate, br', ALL), 'br');
    assert.equal(chooseEncoding('gzip;q=1, br;q=0.5', ALL), 'gzip');
    assert.equal(chooseEncoding('br;q=0.9, gzip;q=0.91', ['br', 'gzip']), 'gzip');
    assert.equal(chooseEncoding('gzip, br', ['gzip', 'br']), 'gzip');
  });

  it('q=0 refuses a coding; * covers the codings not listed', () => {
    assert.equal(chooseEncoding('br;q=0, gzip', ALL), 'gzip');
    assert.equal(chooseEncoding('*', ALL), 'zstd');
    assert.equal(chooseEncoding('*;q=0.5, zstd;q=0, br;q=0', ALL), 'gzip');
    assert.equal(chooseEncoding('*;q=0', ALL), undefined);
    assert.equal(chooseEncoding('identity', ALL), undefined);
    assert.equal(chooseEncoding('identity;q=0, *;q=0', ALL), undefined);
    assert.equal(chooseEncoding('deflate, compress', ALL), undefined);
  });

  it('names are case-insensitive, x-gzip is gzip, malformed weights count as 0', () => {
    assert.equal(chooseEncoding('GZIP', ALL), 'gzip');
    assert.equal(chooseEncoding('x-gzip', ALL), 'gzip');
    assert.equal(chooseEncoding('gzip;q=2', ALL), undefined);
    assert.equal(chooseEncoding('gzip;q=0.0001', ALL), undefined);
    assert.equal(chooseEncoding('gzip ; q=0.5', ALL), 'gzip');
    assert.deepEqual(
      [...parseAcceptEncoding('gzip;q=1.000, br;Q=0.25,, ')],
      [
        ['gzip', 1],
        ['br', 0.25],
      ],
    );
  });

  it('a coding listed twice keeps its lower weight', () => {
    assert.equal(chooseEncoding('gzip, gzip;q=0', ['gzip']), undefined);
  });

  it('the memoised chooser answers like the plain one, and without a header sends identity', () => {
    const choose = createEncodingChooser(['br', 'gzip']);
    assert.equal(choose(undefined), undefined);
    assert.equal(choose(''), undefined);
    for (let i = 0; i < 200; i++)
      assert.equal(
        choose(`gzip;q=0.${i % 9}, br;q=0.1${i}`),
        chooseEncoding(`gzip;q=0.${i % 9}, br;q=0.1${i}`, ['br', 'gzip']),
      );
    assert.equal(choose('gzip, br'), 'br');
    assert.equal(choose('gzip, br'), 'br');
  });
});
