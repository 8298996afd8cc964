/**
 * Collects log lines and hands them to the output stream one batch at a time (64 KiB, or what
 * came within 200 ms). Two costs of the plain sonic-boom setup showed in the issue #8 profile:
 * - each asynchronous write is a hop to libuv's thread pool that cost the event loop ~5 µs a
 *   request with 8 KiB batches; 64 KiB batches (~300 access lines) make that negligible, and
 *   under load a batch is full within ~50 ms;
 * - sonic-boom batching strings measures the whole pending string (`Buffer.byteLength`) for
 *   every line it appends, and keeps the lines on the JavaScript heap until written, long
 *   enough to be promoted to the old generation (old space then grew ~1 MB/s under load).
 * Here each line is encoded at once into an off-heap buffer and its string dies young; the
 * asynchronous writes and the bounded backlog (`maxLength`: lines are dropped rather than queued
 * without end when stdout blocks) stay sonic-boom's, in its buffer mode.
 */
export interface BatchOutput {
  write(chunk: Buffer): unknown;
  flush?(cb: (err?: Error | null) => void): void;
  flushSync?(): void;
}

export class LineBatch {
  private buf: Buffer;
  private used = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly out: BatchOutput,
    private readonly batchBytes = 65_536,
    private readonly idleMs = 200,
  ) {
    this.buf = Buffer.allocUnsafeSlow(batchBytes);
  }

  write(line: string): boolean {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: pass the batch on before it could overflow.
    const worst = line.length * 3;
    if (this.used + worst > this.batchBytes) {
      this.pass();
      if (worst > this.batchBytes) {
        this.out.write(Buffer.from(line));
        return true;
      }
    }
    this.used += this.buf.write(line, this.used);
    if (this.timer === undefined) {
      this.timer = setTimeout(this.onIdle, this.idleMs);
      // A quiet gateway must still be able to exit; shutdown flushes explicitly.
      this.timer.unref();
    }
    return true;
  }

  /** Passes what is collected on, then waits for the output to write everything (pino's `logger.flush`). */
  flush(cb: (err?: Error | null) => void = () => {}): void {
    this.pass();
    if (this.out.flush !== undefined) this.out.flush(cb);
    else cb();
  }

  /** For exits that cannot wait. */
  flushSync(): void {
    this.pass();
    this.out.flushSync?.();
  }

  private readonly onIdle = (): void => {
    this.timer = undefined;
    this.pass();
  };

  private pass(): void {
    if (this.used === 0) return;
    // The output keeps the chunk until its write completes: the next batch gets a new buffer.
    const chunk = this.buf.subarray(0, this.used);
    this.buf = Buffer.allocUnsafeSlow(this.batchBytes);
    this.used = 0;
    this.out.write(chunk);
  }
}
