import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeFrame, FrameBoundary } from './frame-boundary.js';

/** A frame with `size` payload bytes, its length in the 7-, 16- or 64-bit form, masked when asked. */
function frame(size: number, masked = false): Buffer {
  const ext = size < 126 ? 0 : size < 65_536 ? 2 : 8;
  const head = Buffer.alloc(2 + ext + (masked ? 4 : 0));
  head[0] = 0x82;
  head[1] = (masked ? 0x80 : 0) | (ext === 0 ? size : ext === 2 ? 126 : 127);
  if (ext === 2) head.writeUInt16BE(size, 2);
  if (ext === 8) head.writeUInt32BE(size, 6);
  return Buffer.concat([head, Buffer.alloc(size, 7)]);
}

describe('FrameBoundary', () => {
  it('knows where frames end, whatever their length form, masked or not, however the bytes are cut', () => {
    for (const [size, masked] of [
      [0, false],
      [5, true],
      [125, false],
      [126, false],
      [300, true],
      [70_000, false],
      [70_000, true],
    ] as const) {
      const bytes = Buffer.concat([frame(size, masked), frame(3)]);
      const first = frame(size, masked).length;
      for (const cut of [1, 2, 3, 7, 13, first - 1, first, first + 1].filter((c) => c > 0 && c < bytes.length)) {
        const f = new FrameBoundary();
        f.advance(bytes.subarray(0, cut));
        assert.equal(f.atBoundary, cut === first, `size ${size}, masked ${masked}, cut at ${cut}`);
        f.advance(bytes.subarray(cut));
        assert.equal(f.atBoundary, true);
      }
    }
  });

  it('stops at the end of the frame in progress when asked', () => {
    const f = new FrameBoundary();
    const first = frame(200);
    f.advance(first.subarray(0, 50));
    const rest = Buffer.concat([first.subarray(50), frame(10)]);
    assert.equal(f.advance(rest, true), first.length - 50);
    assert.equal(f.atBoundary, true);
  });

  it('writes a close frame with its code and reason', () => {
    assert.deepEqual(
      closeFrame(1008, 'token expired'),
      Buffer.from([0x88, 15, 0x03, 0xf0, ...Buffer.from('token expired')]),
    );
  });
});
