import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LineBatch } from './line-batch.js';

function output() {
  const chunks: string[] = [];
  let wrote: (() => void) | undefined;
  return {
    chunks,
    next: () => new Promise<void>((resolve) => (wrote = resolve)),
    write(chunk: Buffer) {
      chunks.push(chunk.toString('utf8'));
      wrote?.();
    },
    flushes: 0,
    flush(cb: (err?: Error | null) => void) {
      this.flushes++;
      cb();
    },
  };
}

describe('LineBatch', () => {
  it('hands lines over in one chunk before the batch could overflow, in order', () => {
    const out = output();
    const batch = new LineBatch(out, 100, 60_000);
    batch.write('line one......\n');
    batch.write('line two......\n');
    assert.deepEqual(out.chunks, [], '30 bytes, worst case 90: still fits');
    const third = 'c'.repeat(30) + '\n'; // 30 + 3 x 31 > 100: the first two go first
    batch.write(third);
    assert.deepEqual(out.chunks, ['line one......\nline two......\n']);
    batch.flush();
    assert.deepEqual(out.chunks, ['line one......\nline two......\n', third]);
  });

  it('encodes UTF-8 exactly and writes a line longer than a batch on its own', () => {
    const out = output();
    const batch = new LineBatch(out, 64, 60_000);
    batch.write('é😀\n');
    const long = 'x'.repeat(100) + '\n';
    batch.write(long);
    batch.flush();
    assert.deepEqual(out.chunks, ['é😀\n', long]);
  });

  it('passes a quiet batch on after the idle time', async () => {
    const out = output();
    const batch = new LineBatch(out, 8192, 5);
    const passed = out.next();
    // The batch's timer is unref'd (it must not keep a quiet gateway alive): hold the loop open.
    const hold = setTimeout(() => {}, 10_000);
    batch.write('alone\n');
    await passed;
    clearTimeout(hold);
    assert.deepEqual(out.chunks, ['alone\n']);
  });

  it('flush writes what is collected, then waits for the output', () => {
    const out = output();
    const batch = new LineBatch(out, 8192, 60_000);
    batch.write('a\n');
    let called = 0;
    batch.flush(() => called++);
    assert.deepEqual(out.chunks, ['a\n']);
    assert.equal(out.flushes, 1);
    assert.equal(called, 1);
    batch.flush();
    assert.deepEqual(out.chunks, ['a\n'], 'nothing new: no empty write');
  });
});
