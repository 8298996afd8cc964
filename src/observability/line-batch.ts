/**
 * Collects log lines and hands them to the output in chunks of 64 KiB, or of what was collected
 * within `maxDelayMs` of a chunk's first line when less comes: never one write per line. Under
 * load a chunk fills long before the delay, so the output sees one write system call per 64 KiB;
 * a quiet gateway's line waits at most the delay.
 *
 * Design note:
 * - each line is encoded at once into one reused off-heap buffer, so its string dies young
 *   (lines kept as strings until written get promoted to the old generation under load); the
 *   chunk handed over is a copy of just the bytes used. A writer may also encode its line
 *   straight into that buffer (`writeEncoded`), with no string at all;
 * - the output reports how many bytes it still holds (`pendingBytes`). When a chunk would take
 *   that past `maxPendingBytes`, the chunk is dropped and its lines counted instead: a sink that
 *   cannot keep up (a pipe nobody reads, a stalled log collector) costs a bounded amount of
 *   memory and never slows or holds a request;
 * - dropped lines are reported through `reportDrops` at most once per `reportEveryMs`, with the
 *   count since the previous report, and only when the output has room again (a report into a
 *   full output would itself be dropped).
 */
export interface BatchOutput {
  write(chunk: Buffer): unknown;
  /** Bytes handed to `write` and not written yet; absent when the output never falls behind. */
  pendingBytes?(): number;
  /** Calls back once everything handed over is written (or cannot be). */
  flush?(cb: (err?: Error | null) => void): void;
  flushSync?(): void;
}

export interface LineBatchOptions {
  /** Largest chunk handed over at once (default 64 KiB). */
  readonly batchBytes?: number;
  /** Longest a line waits for its chunk to fill (default 100 ms). */
  readonly maxDelayMs?: number;
  /** Bytes the output may hold unwritten before new chunks are dropped (default 4 MiB). */
  readonly maxPendingBytes?: number;
  /** Shortest time between two drop reports (default 10 s). */
  readonly reportEveryMs?: number;
  /** Clock of the drop reports (ms). */
  readonly now?: () => number;
}

/** Called with the lines dropped since the previous call and the process's total so far. */
export type DropReporter = (lines: number, total: number) => void;

export class LineBatch {
  private readonly buf: Buffer;
  private used = 0;
  private lines = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly batchBytes: number;
  private readonly maxDelayMs: number;
  private readonly maxPendingBytes: number;
  private readonly reportEveryMs: number;
  private readonly now: () => number;
  private reporter: DropReporter | undefined;
  private reportTimer: NodeJS.Timeout | undefined;
  private lastReportAt = Number.NEGATIVE_INFINITY;
  private unreported = 0;
  /** Lines dropped since this batch was made. */
  droppedLines = 0;

  constructor(
    private readonly out: BatchOutput,
    options: LineBatchOptions = {},
  ) {
    this.batchBytes = options.batchBytes ?? 65_536;
    this.maxDelayMs = options.maxDelayMs ?? 100;
    this.maxPendingBytes = options.maxPendingBytes ?? 4 * 1024 * 1024;
    this.reportEveryMs = options.reportEveryMs ?? 10_000;
    this.now = options.now ?? Date.now;
    this.buf = Buffer.allocUnsafeSlow(this.batchBytes);
  }

  write(line: string): boolean {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: pass the batch on before it could overflow.
    const worst = line.length * 3;
    if (this.used + worst > this.batchBytes) {
      this.pass();
      if (worst > this.batchBytes) {
        this.hand(Buffer.from(line), 1);
        return true;
      }
    }
    this.used += this.buf.write(line, this.used);
    this.added();
    return true;
  }

  /**
   * Adds a line that `encode` writes straight into the batch, from `at`, returning where it
   * stopped; it must write at most `maxBytes` bytes. Nothing is written and false returned when
   * a line that long could never fit a batch: the caller then writes it as a string.
   */
  writeEncoded<T>(maxBytes: number, encode: (buf: Buffer, at: number, value: T) => number, value: T): boolean {
    if (this.used + maxBytes > this.batchBytes) {
      if (maxBytes > this.batchBytes) return false;
      this.pass();
    }
    this.used = encode(this.buf, this.used, value);
    this.added();
    return true;
  }

  private added(): void {
    this.lines++;
    if (this.timer === undefined) {
      this.timer = setTimeout(this.onDelay, this.maxDelayMs);
      // A quiet gateway must still be able to exit; shutdown flushes explicitly.
      this.timer.unref();
    }
  }

  /** Sends the count of dropped lines to `reporter` (see the design note); replaces any earlier one. */
  reportDrops(reporter: DropReporter): void {
    this.reporter = reporter;
    if (this.unreported > 0) this.armReport();
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

  private readonly onDelay = (): void => {
    this.timer = undefined;
    this.pass();
  };

  private pass(): void {
    if (this.used === 0) return;
    const size = this.used;
    const lines = this.lines;
    this.used = 0;
    this.lines = 0;
    if (!this.hasRoomFor(size)) return this.drop(lines);
    // The output keeps the chunk until it is written; the collecting buffer is reused.
    const chunk = Buffer.allocUnsafe(size);
    this.buf.copy(chunk, 0, 0, size);
    this.out.write(chunk);
  }

  private hand(chunk: Buffer, lines: number): void {
    if (this.hasRoomFor(chunk.length)) this.out.write(chunk);
    else this.drop(lines);
  }

  private hasRoomFor(bytes: number): boolean {
    const pending = this.out.pendingBytes?.() ?? 0;
    return pending + bytes <= this.maxPendingBytes;
  }

  private drop(lines: number): void {
    this.droppedLines += lines;
    this.unreported += lines;
    this.armReport();
  }

  private armReport(): void {
    if (this.reporter === undefined || this.reportTimer !== undefined) return;
    this.reportTimer = setTimeout(this.onReportDue, Math.max(0, this.lastReportAt + this.reportEveryMs - this.now()));
    // Reports must not keep a stopping gateway alive.
    this.reportTimer.unref();
  }

  private readonly onReportDue = (): void => {
    this.reportTimer = undefined;
    const wait = this.lastReportAt + this.reportEveryMs - this.now();
    // Still full: look again soon rather than write a report that would be dropped too. The
    // timer may also fire a little before the clock says the interval is over.
    if (wait > 0 || !this.hasRoomFor(this.batchBytes)) {
      this.reportTimer = setTimeout(this.onReportDue, wait > 0 ? wait : Math.min(1_000, this.reportEveryMs));
      this.reportTimer.unref();
      return;
    }
    const lines = this.unreported;
    this.unreported = 0;
    this.lastReportAt = this.now();
    this.reporter?.(lines, this.droppedLines);
  };
}
