/**
 * Collects log lines and hands them to the output stream one batch at a time (8 KiB, or what
 * came within 200 ms). sonic-boom batches too (`minLength`), but its `write()` measures the
 * whole pending string (`Buffer.byteLength`) for every line it appends: with an 8 KiB buffer
 * that cost ~2.3 µs a line, as much as pino's serialisation, and more when the disk or pipe is
 * slow and the buffer grows (issue #8 profile). Here a line costs an array push; the byte
 * counting, the bounded buffer (`maxLength`: lines are dropped rather than queued without end
 * when stdout blocks) and the asynchronous writes stay sonic-boom's.
 */
export interface BatchOutput {
  write(chunk: string): unknown;
  flush?(cb: (err?: Error | null) => void): void;
  flushSync?(): void;
}

export class LineBatch {
  private lines: string[] = [];
  private chars = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly out: BatchOutput,
    private readonly batchChars = 8192,
    private readonly idleMs = 200,
  ) {}

  write(line: string): boolean {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= this.batchChars) this.pass();
    else if (this.timer === undefined) {
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
    const { lines } = this;
    if (lines.length === 0) return;
    this.lines = [];
    this.chars = 0;
    this.out.write(lines.length === 1 ? lines[0]! : lines.join(''));
  }
}
