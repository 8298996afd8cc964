import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { JSON_STRING_MAX_BYTES_PER_UNIT, hundredths, putHundredths, putJsonString, putUint } from './json-bytes.js';

/** What a writer put into a fresh buffer, as text. */
function written(put: (buf: Buffer, at: number) => number): string {
  const buf = Buffer.alloc(64 * 1024, 0xff);
  const end = put(buf, 3);
  assert.equal(buf[2], 0xff, 'nothing written before the position given');
  assert.equal(buf[end], 0xff, 'nothing written after the position returned');
  return buf.toString('utf8', 3, end);
}

describe('putJsonString', () => {
  const strings = [
    '',
    'b6f1c8a2-1234-4cde-9f00-0123456789ab',
    'GET /users/:id',
    'a"b\\c',
    'tab\there, bell\u0007, del\u007f',
    '/api/\u00e9t\u00e9/\u{1F600}',
    'lone \ud800 surrogate',
  ];
  for (const s of strings) {
    it(`writes ${JSON.stringify(s)} as JSON.stringify does`, () => {
      assert.equal(
        written((buf, at) => putJsonString(buf, at, s)),
        JSON.stringify(s),
      );
    });
  }

  it('never writes more than the bound per UTF-16 unit, plus the quotes', () => {
    for (const s of ['\u0001'.repeat(50), '\ud800'.repeat(50), '\u{1F600}'.repeat(25), '\u00e9'.repeat(50)]) {
      const bytes = Buffer.byteLength(written((buf, at) => putJsonString(buf, at, s)));
      assert.ok(bytes <= 2 + JSON_STRING_MAX_BYTES_PER_UNIT * s.length, `${bytes} bytes for ${s.length} units`);
    }
  });
});

describe('putUint', () => {
  it('writes non-negative integers in decimal', () => {
    for (const n of [0, 7, 9, 10, 99, 100, 200, 404, 999, 1000, 123_456_789, Number.MAX_SAFE_INTEGER]) {
      assert.equal(
        written((buf, at) => putUint(buf, at, n)),
        String(n),
      );
    }
  });
});

describe('hundredths and putHundredths', () => {
  it('write every duration in hundredths of a millisecond as JavaScript writes the number', () => {
    const buf = Buffer.alloc(64);
    for (let h = 0; h <= 200_000; h++) {
      const ms = h / 100;
      if (hundredths(ms) !== String(ms)) assert.fail(`${ms}: ${hundredths(ms)}`);
      const end = putHundredths(buf, 0, ms);
      if (buf.toString('latin1', 0, end) !== String(ms)) assert.fail(`${ms}: ${buf.toString('latin1', 0, end)}`);
    }
    assert.equal(hundredths(3_600_000.07), '3600000.07');
    assert.equal(
      written((buf, at) => putHundredths(buf, at, 3_600_000.07)),
      '3600000.07',
    );
  });

  it('round a finer duration to hundredths', () => {
    for (const [ms, text] of [
      [1.234, '1.23'],
      [0.996, '1'],
      [2.0049, '2'],
      [0.05, '0.05'],
    ] as const) {
      assert.equal(hundredths(ms), text);
      assert.equal(
        written((buf, at) => putHundredths(buf, at, ms)),
        text,
      );
    }
  });
});
