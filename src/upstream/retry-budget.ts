/**
 * The retry budget of a named upstream (docs/upstreams.md "Retries"): retries may add at most
 * `ratio` of the calls made over the last `windowMs` (20% over 10 s), with a floor of `minRetries`
 * (10) so a quiet upstream can still retry while a failing target is being ejected. When every target fails, retries stop at the budget instead
 * of multiplying the outage. Two fixed windows, the previous one weighted by how much of it the
 * sliding window still covers, as rate limiters approximate a sliding window.
 */
import type { CallBudget } from './types.js';

export class RetryBudget implements CallBudget {
  private windowStart = 0;
  private calls = 0;
  private retries = 0;
  private previousCalls = 0;
  private previousRetries = 0;

  constructor(
    private readonly now: () => number,
    private readonly ratio = 0.2,
    private readonly windowMs = 10_000,
    private readonly minRetries = 10,
  ) {}

  /** Counts a first attempt. */
  call(): void {
    this.roll();
    this.calls++;
  }

  /** Takes one retry from the budget; false when it is spent. */
  tryRetry(): boolean {
    const weight = this.roll();
    const calls = this.calls + this.previousCalls * weight;
    const retries = this.retries + this.previousRetries * weight;
    if (retries + 1 > Math.max(this.minRetries, calls * this.ratio)) return false;
    this.retries++;
    return true;
  }

  /** Moves the windows on; returns the weight of the previous window. */
  private roll(): number {
    const now = this.now();
    const elapsed = now - this.windowStart;
    if (elapsed >= this.windowMs) {
      const skipped = elapsed >= 2 * this.windowMs;
      this.previousCalls = skipped ? 0 : this.calls;
      this.previousRetries = skipped ? 0 : this.retries;
      this.calls = 0;
      this.retries = 0;
      this.windowStart = skipped ? now : this.windowStart + this.windowMs;
    }
    return 1 - (now - this.windowStart) / this.windowMs;
  }
}
