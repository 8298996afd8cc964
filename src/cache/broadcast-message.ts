/**
 * The message a replica publishes when it purges or invalidates cached answers (cache/broadcast.ts,
 * docs/caching.md "Every replica's memory"): who sent it, and what to drop, as purge targets.
 *
 *   {"v":1,"from":"<instance id>","cause":"invalidation","targets":[{"kind":"url","host":"api.example.com","path":"/items/1"}]}
 *
 * Bounded on both sides: the sender shortens any value past MAX_VALUE_CHARS into a shorter prefix
 * (which drops as much or more, never less) and sends at most MAX_TARGETS targets, so that a
 * message never exceeds MAX_MESSAGE_BYTES; the receiver does not parse a larger one and ignores
 * anything that is not exactly this shape (another program on the channel, another version).
 */
import type { PurgeTarget } from './purge.js';

/** The format's version: a receiver ignores messages of another one. */
const VERSION = 1;
/** Longest path, prefix or route id carried as it is. */
export const MAX_VALUE_CHARS = 2048;
/** Longest host carried: a Host header longer than any DNS name (253) is no name. */
const MAX_HOST_CHARS = 255;
/** An invalidation names at most three URLs (the request's, Location, Content-Location); a purge one. */
const MAX_TARGETS = 4;
const MAX_FROM_CHARS = 64;
/**
 * Largest message read: MAX_TARGETS targets of the longest values, every character escaped by
 * JSON (six bytes), still fit.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024;

/** Why answers were dropped: an admin purge, or an unsafe request (RFC 9111 4.4). */
export type BroadcastCause = 'purge' | 'invalidation';

/** A message read from the channel. */
export interface BroadcastMessage {
  readonly from: string;
  readonly cause: BroadcastCause;
  readonly targets: readonly PurgeTarget[];
}

/** The message for `targets` (at most MAX_TARGETS, each bounded by boundedTarget). */
export function encodeMessage(from: string, cause: BroadcastCause, targets: readonly PurgeTarget[]): Buffer {
  return Buffer.from(
    JSON.stringify({
      v: VERSION,
      from,
      cause,
      targets: targets
        .slice(0, MAX_TARGETS)
        .map((t) =>
          t.kind === 'route'
            ? { kind: t.kind, host: t.host ?? null, routeId: t.routeId }
            : { kind: t.kind, host: t.host ?? null, path: t.path },
        ),
    }),
  );
}

/** The targets of an invalidation, from the primary keys it dropped (`host\0path`). */
export function invalidationTargets(primaries: readonly string[]): PurgeTarget[] {
  return primaries.map((primary) => {
    const cut = primary.indexOf('\u0000');
    return boundedTarget({ kind: 'url', host: primary.slice(0, cut), path: primary.slice(cut + 1) });
  });
}

/**
 * `target` within the bounds of a message: a longer path becomes a prefix of it, a longer host
 * every host, a longer route id everything of its host. Each drops at least what `target` drops.
 */
export function boundedTarget(target: PurgeTarget): PurgeTarget {
  const hostFits = target.host === undefined || target.host.length <= MAX_HOST_CHARS;
  const host = hostFits ? target.host : undefined;
  if (target.kind === 'route')
    return target.routeId.length <= MAX_VALUE_CHARS && hostFits ? target : { kind: 'prefix', host, path: '' };
  if (target.path.length <= MAX_VALUE_CHARS && hostFits) return target;
  return { kind: 'prefix', host, path: target.path.slice(0, MAX_VALUE_CHARS) };
}

/** The message in `raw`; undefined when it is too large or not exactly a message of this version. */
export function decodeMessage(raw: Buffer): BroadcastMessage | undefined {
  if (raw.length === 0 || raw.length > MAX_MESSAGE_BYTES) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isRecord(value) || value.v !== VERSION) return undefined;
  const { from, cause, targets } = value;
  if (typeof from !== 'string' || from === '' || from.length > MAX_FROM_CHARS) return undefined;
  if (cause !== 'purge' && cause !== 'invalidation') return undefined;
  if (!Array.isArray(targets) || targets.length === 0 || targets.length > MAX_TARGETS) return undefined;
  const read: PurgeTarget[] = [];
  for (const t of targets as unknown[]) {
    const target = readTarget(t);
    if (target === undefined) return undefined;
    read.push(target);
  }
  return { from, cause, targets: read };
}

function readTarget(value: unknown): PurgeTarget | undefined {
  if (!isRecord(value)) return undefined;
  const { kind, host } = value;
  if (host !== null && (typeof host !== 'string' || host.length > MAX_HOST_CHARS)) return undefined;
  const hostKey = host ?? undefined;
  if (kind === 'route') {
    const { routeId } = value;
    return isValue(routeId) && routeId !== '' ? { kind, host: hostKey, routeId } : undefined;
  }
  if (kind !== 'url' && kind !== 'prefix') return undefined;
  const { path } = value;
  return isValue(path) ? { kind, host: hostKey, path } : undefined;
}

function isValue(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_VALUE_CHARS;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
