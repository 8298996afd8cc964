/**
 * What a JSON call (json-call.ts) needs of its caller's "nobody waits any more": whether it has
 * happened, and a listener while the call runs. An AbortSignal is one (an aggregated route's);
 * a mapped response uses the lighter `CallerLeft`, made for every response: an AbortController
 * (an EventTarget, its listeners kept weakly) was, after the shaping itself, Portico's largest
 * cost of its own per mapped response (docs/performance.md "JSON shaping against the
 * hand-written proxy").
 */
export interface CallerSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** A CallerSignal that `leave()` sets off, once: every listener runs once, in the order added. */
export class CallerLeft implements CallerSignal {
  aborted = false;
  private listeners: Set<() => void> | undefined;

  /** Every listener runs at most once (`once` or not): the signal goes off once. */
  addEventListener(_type: 'abort', listener: () => void, _options?: { readonly once?: boolean }): void {
    if (!this.aborted) (this.listeners ??= new Set()).add(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    this.listeners?.delete(listener);
  }

  leave(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener();
  }
}
