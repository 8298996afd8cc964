/**
 * The disk space request bodies may take in temporary files (layers/request-buffer.ts): a cap for
 * the whole process and one per client, so that slow uploads cannot fill the disk and one client
 * cannot take the whole budget from the others (docs/operations.md "Request buffering").
 *
 * Bytes are reserved before they are written and released when the body's file is closed. A
 * body with a `Content-Length` reserves all of it as soon as it starts to spill, so a slow upload
 * holds what it will take from its first byte, and the refusal comes before its body is read.
 * The budget is made once per process and survives reloads: the requests still running on the
 * old configuration release into it. The caps are those of the configuration a request runs on.
 */

/** The caps of one configuration (`limits.spillMaxBytes`, `limits.spillMaxBytesPerClient`). */
export interface SpillCaps {
  readonly maxBytes: number;
  readonly maxBytesPerClient: number;
}

/** Which cap refused a reservation. */
export type SpillLimit = 'client' | 'total';

export interface SpillBudget {
  /** Bytes reserved now, all clients together. */
  readonly bytes: number;
  /** Bytes reserved now by `client`. */
  bytesOf(client: string): number;
  /** Reserves `bytes` for `client`; returns the cap that refused it (nothing reserved then), else undefined. */
  reserve(client: string, bytes: number, caps: SpillCaps): SpillLimit | undefined;
  /** Gives back bytes `reserve` granted to `client`. */
  release(client: string, bytes: number): void;
}

/** Creates a process's budget: nothing reserved. */
export function createSpillBudget(): SpillBudget {
  // Only clients holding bytes have an entry: the map is bounded by the uploads in progress.
  const byClient = new Map<string, number>();
  let total = 0;
  return {
    get bytes() {
      return total;
    },
    bytesOf: (client) => byClient.get(client) ?? 0,
    reserve(client, bytes, caps) {
      const held = byClient.get(client) ?? 0;
      // The client's own cap first: a greedy client is told 429, not everyone's 503.
      if (held + bytes > caps.maxBytesPerClient) return 'client';
      if (total + bytes > caps.maxBytes) return 'total';
      byClient.set(client, held + bytes);
      total += bytes;
      return undefined;
    },
    release(client, bytes) {
      const held = byClient.get(client) ?? 0;
      const left = held - bytes;
      if (left > 0) byClient.set(client, left);
      else byClient.delete(client);
      total -= Math.min(bytes, held);
    },
  };
}

/**
 * What one request holds: reservations grow as its body spills, and `release` gives everything
 * back once (a second call does nothing).
 */
export interface SpillReservation {
  /** The key the bytes are counted under (resolved at the first reservation). */
  readonly client: string;
  /** Bytes held. */
  readonly bytes: number;
  /** Holds at least `bytes` in all: reserves the difference; the refusing cap, else undefined. */
  holdUpTo(bytes: number): SpillLimit | undefined;
  release(): void;
}

/**
 * A reservation on `budget`, holding nothing yet. `clientOf` is asked once, when the body first
 * spills: a body that stays in memory costs no client lookup.
 */
export function createSpillReservation(budget: SpillBudget, clientOf: () => string, caps: SpillCaps): SpillReservation {
  let client: string | undefined;
  let held = 0;
  return {
    get client() {
      return (client ??= clientOf());
    },
    get bytes() {
      return held;
    },
    holdUpTo(bytes) {
      if (bytes <= held) return undefined;
      const refused = budget.reserve(this.client, bytes - held, caps);
      if (refused === undefined) held = bytes;
      return refused;
    },
    release() {
      if (held === 0) return;
      budget.release(this.client, held);
      held = 0;
    },
  };
}
