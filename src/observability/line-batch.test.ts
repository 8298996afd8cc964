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

/** An output that writes nothing until told: everything handed over stays pending. */
function slowOutput() {
  const held: Buffer[] = [];
  let pending = 0;
  return {
    held,
    write(chunk: Buffer) {
      held.push(chunk);
      pending += chunk.length;
    },
    pendingBytes: () => pending,
    /** The sink catches up: everything held is written. */
    drain() {
      held.length = 0;
      pending = 0;
    },
  };
}

describe('LineBatch', () => {
  it('hands lines over in one chunk before the batch could overflow, in order', () => {
    const out = output();
    const batch = new LineBatch(out, { batchBytes: 100 });
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
    const batch = new LineBatch(out, { batchBytes: 64 });
    batch.write('é😀\n');
    const long = 'x'.repeat(100) + '\n';
    batch.write(long);
    batch.flush();
    assert.deepEqual(out.chunks, ['é😀\n', long]);
  });

  it('passes a batch that does not fill on within the delay of its first line, as one chunk', async () => {
    const out = output();
    // Long enough that one event-loop turn never outlasts it, even on a loaded machine.
    const batch = new LineBatch(out, { maxDelayMs: 100 });
    // The batch's timer is unref'd (it must not keep a quiet gateway alive): hold the loop open.
    const hold = setTimeout(() => {}, 10_000);
    try {
      const passed = out.next();
      const started = performance.now();
      batch.write('a\n');
      batch.write('b\n');
      await new Promise<void>((resolve) => setImmediate(resolve));
      batch.write('c\n');
      assert.deepEqual(out.chunks, [], 'nothing written before the delay: lines of several turns share a write');
      await passed;
      assert.ok(performance.now() - started >= 99, 'not before the delay (timers may round down by a millisecond)');
      assert.deepEqual(out.chunks, ['a\nb\nc\n']);
    } finally {
      clearTimeout(hold);
    }
  });

  it('flush writes what is collected, then waits for the output', () => {
    const out = output();
    const batch = new LineBatch(out);
    batch.write('a\n');
    let called = 0;
    batch.flush(() => called++);
    assert.deepEqual(out.chunks, ['a\n']);
    assert.equal(out.flushes, 1);
    assert.equal(called, 1);
    batch.flush();
    assert.deepEqual(out.chunks, ['a\n'], 'nothing new: no empty write');
  });

  it('drops and counts the lines a slow output cannot take, holding no more than the bound', async () => {
    const out = slowOutput();
    const line = 'x'.repeat(99) + '\n'; // 100 bytes
    const batch = new LineBatch(out, { batchBytes: 1_000, maxPendingBytes: 2_500 });
    let maxHeld = 0;
    // 10 batches of 5 lines (500 bytes each): the output takes 5, then is full.
    for (let n = 0; n < 10; n++) {
      for (let i = 0; i < 5; i++) assert.equal(batch.write(line), true);
      batch.flush();
      maxHeld = Math.max(maxHeld, out.pendingBytes());
    }
    assert.equal(out.held.length, 5, 'one chunk a batch until the bound');
    assert.equal(maxHeld, 2_500, 'never more than maxPendingBytes held');
    assert.equal(batch.droppedLines, 25, 'every line of the five refused batches counted');

    out.drain();
    batch.write(line);
    batch.flush();
    assert.equal(out.held.length, 1, 'lines flow again once the output has caught up');
    assert.equal(batch.droppedLines, 25);
  });

  it('reports drops once the output has room, at most once per interval, with the count since the last report', async () => {
    const out = slowOutput();
    const line = 'y'.repeat(9) + '\n';
    let clock = 1_000_000;
    let clockReads = 0;
    let onClockRead: (() => void) | undefined;
    const now = () => {
      clockReads++;
      onClockRead?.();
      return clock;
    };
    /** Resolves after the batch read its clock `n` more times (each report check reads it). */
    const clockReadsFurther = (n: number) =>
      new Promise<void>((resolve) => {
        const target = clockReads + n;
        onClockRead = () => {
          if (clockReads >= target) {
            onClockRead = undefined;
            setImmediate(resolve);
          }
        };
      });
    const reports: { lines: number; total: number; at: number }[] = [];
    let reported: (() => void) | undefined;
    const batch = new LineBatch(out, { batchBytes: 100, maxPendingBytes: 100, reportEveryMs: 5, now });
    batch.reportDrops((lines, total) => {
      reports.push({ lines, total, at: clock });
      reported?.();
    });
    // Hold the loop open: the report timer is unref'd so that it never keeps a gateway alive.
    const hold = setInterval(() => {}, 1_000);
    try {
      const fill = async (batches: number) => {
        for (let t = 0; t < batches; t++) {
          for (let i = 0; i < 10; i++) batch.write(line); // 100 bytes a batch
          batch.flush();
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      };
      await fill(4); // the first batch fills the output; three batches (30 lines) are dropped
      assert.equal(batch.droppedLines, 30);
      await clockReadsFurther(3);
      assert.deepEqual(reports, [], 'no report while the output is still full: it would be dropped too');

      let next = new Promise<void>((resolve) => (reported = resolve));
      out.drain();
      await next;
      assert.deepEqual(reports, [{ lines: 30, total: 30, at: 1_000_000 }]);

      await fill(3); // two more batches dropped
      out.drain();
      await clockReadsFurther(3);
      assert.equal(reports.length, 1, 'the interval since the last report has not passed on the clock');

      next = new Promise<void>((resolve) => (reported = resolve));
      clock += 5;
      await next;
      assert.deepEqual(reports[1], { lines: 20, total: 50, at: 1_000_005 });
    } finally {
      clearInterval(hold);
    }
  });
});
