/**
 * The deadlines of a backend call, kept by the gateway rather than by undici's timers
 * (./deadlines.ts says why): the head is due `headersTimeoutMs` after the call started, or after
 * the last chunk of a streamed request body went out; then no more than `bodyTimeoutMs` may pass
 * between two body chunks, not counting the time the answer waits for the client to drain.
 */
import type { Readable } from 'node:stream';
import type { DeadlineSweep, Watched } from './deadlines.js';

/** What the deadlines of one route's calls are (a `RouteCall`). */
interface CallTimes {
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly deadlines: DeadlineSweep;
}

/** A call watched by the deadline sweep; `overdue` says what running out means. */
export abstract class TimedCall implements Watched {
  /** When the head, or the next body chunk, is due (on the clock of `times.deadlines`, which watches it). */
  deadlineAt = Number.POSITIVE_INFINITY;
  sweepPrev: Watched | undefined;
  sweepNext: Watched | undefined;
  sweepBy: DeadlineSweep | undefined;
  /** The request body while it streams to the backend and is not all sent yet. */
  protected upload: Readable | undefined;
  /** The answer waits for the client to take what was written ('drain'). */
  protected waitingForClient = false;
  /** Resumes the backend connection's parser after onData returned false. */
  protected resumeCall: (() => void) | undefined;
  /** The client took what was written: the body's idle wait starts again and the backend goes on. */
  protected readonly onDrain = (): void => {
    this.waitingForClient = false;
    this.nextChunkDue();
    this.resumeCall?.();
  };

  constructor(private readonly times: CallTimes) {}

  abstract overdue(now: number): void;

  /** undici: a chunk of a streamed request body went out; the head is due a full wait after the last one. */
  onBodySent(): void {
    const ms = this.times.headersTimeoutMs;
    if (this.upload !== undefined && ms > 0) this.deadlineAt = this.times.deadlines.now() + ms;
  }

  /** undici: the whole request went out. */
  onRequestSent(): void {
    if (this.upload === undefined) return;
    this.onBodySent();
    this.upload = undefined;
  }

  /** The call is due `ms` from now and watched until it finishes; `ms` 0 means no deadline. */
  protected watchFor(ms: number): void {
    const deadlines = this.times.deadlines;
    if (ms <= 0) return deadlines.unwatch(this);
    this.deadlineAt = deadlines.now() + ms;
    deadlines.watch(this, ms);
  }

  /** The body's next chunk is due a full idle wait from now (a chunk came, or the client drained). */
  protected nextChunkDue(): void {
    const ms = this.times.bodyTimeoutMs;
    if (ms > 0) this.deadlineAt = this.times.deadlines.now() + ms;
  }
}
