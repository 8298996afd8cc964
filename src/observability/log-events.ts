/**
 * The gateway's events as log lines: the access log, warnings (identical ones counted rather than
 * repeated during an outage, repeat-limit.ts), and the routine changes operators look for.
 */
import { accessLogWriter } from './access-log.js';
import type { EventBus, GatewayEvents } from './events.js';
import type { Logger } from './logger.js';
import { limitRepeats } from './repeat-limit.js';

/** The events whose warnings go through a repeat limit: each names its request and its route. */
type WarnedEvent = 'upstream:error' | 'mapping:fail' | 'aggregate:incomplete' | 'body:spill-refused';

interface RepeatedWarning<E> {
  /** What identical warnings share; those of one key are counted, not written, within a window. */
  readonly key: (e: E) => string;
  /** The line's fields after `reqId` and `route`. */
  readonly fields: (e: E) => object;
  readonly message: (e: E) => string;
  /** The item count an event stands for, summed as `repeatedItems`. */
  readonly items?: (e: E) => number;
}

const TARGET_MESSAGES = {
  failing: 'upstream target failing; calls go to the other targets while it does',
  recovered: 'upstream target answering again',
  ejected: 'upstream target ejected',
  restored: 'upstream target back in service',
  unhealthy: 'upstream target unhealthy',
  healthy: 'upstream target healthy',
} as const;

/**
 * Subscribes the logger to the gateway's events. `repeatWindowMs` overrides the window in which
 * identical warnings are counted instead of written (observability/repeat-limit.ts; tests).
 */
export function logEvents(bus: EventBus, logger: Logger, options: { repeatWindowMs?: number } = {}): void {
  bus.on('request:end', accessLogWriter(logger));
  logFailures(bus, logger, options.repeatWindowMs);
  logRoutine(bus, logger);
}

/** Failed upstream calls, mappings and aggregations, refused uploads: warnings, limited when they repeat. */
function logFailures(bus: EventBus, logger: Logger, windowMs: number | undefined): void {
  // An outage makes every request fail alike: identical warnings (same route, origin or tag, and
  // kind or reason) are written once per window with the count of those held back.
  warnRepeatLimited(bus, logger, windowMs, 'upstream:error', {
    key: (e) => `${e.routeId} ${e.origin} ${e.kind}`,
    fields: (e) => ({ origin: e.origin, kind: e.kind, err: e.error }),
    message: () => 'upstream error',
  });
  warnRepeatLimited(bus, logger, windowMs, 'mapping:fail', {
    key: (e) => `${e.routeId} ${e.tag} ${e.reasons === undefined ? e.reason : Object.keys(e.reasons).sort().join('|')}`,
    fields: (e) => ({ tag: e.tag, url: e.url, reason: e.reason, items: e.items, calls: e.calls, reasons: e.reasons }),
    message: () => 'mapping failed',
    items: (e) => e.items,
  });
  warnRepeatLimited(bus, logger, windowMs, 'aggregate:incomplete', {
    key: (e) => `${e.routeId} ${e.failed.map((f) => `${f.backend}:${f.reason}`).join('|')}`,
    fields: (e) => ({ failed: e.failed, total: e.total }),
    message: (e) =>
      e.failed.length === e.total ? 'aggregation failed: no backend answered' : 'aggregation incomplete',
  });
  // A client flooding uploads is written once per window with the count, its next refusals held back.
  warnRepeatLimited(bus, logger, windowMs, 'body:spill-refused', {
    key: (e) => `${e.routeId} ${e.limit} ${e.client}`,
    fields: (e) => ({
      client: e.client,
      limit: e.limit,
      bytes: e.bytes,
      clientBytes: e.clientBytes,
      totalBytes: e.totalBytes,
    }),
    message: (e) =>
      e.limit === 'client'
        ? 'request body refused: the client holds limits.spillMaxBytesPerClient in temporary files'
        : 'request body refused: temporary files hold limits.spillMaxBytes',
  });
}

/** Events written as they come, one line each: departures, retries, circuits, targets, refusals, reloads. */
function logRoutine(bus: EventBus, logger: Logger): void {
  // A departure is routine (a tab closed, an EventSource reconnecting): debug, without a stack.
  bus.on('client:closed', (e) =>
    logger.debug({ reqId: e.requestId, route: e.routeId, origin: e.origin }, 'client closed'),
  );
  bus.on('upstream:retry', (e) =>
    logger.debug(
      { reqId: e.requestId, route: e.routeId, upstream: e.origin, target: e.target, reason: e.reason },
      'retried on another target',
    ),
  );
  bus.on('circuit:change', (e) => logger.warn(e, 'circuit state change'));
  bus.on('upstream:target', (e) => {
    const line = { upstream: e.upstream, target: e.target, ejectedForMs: e.ejectedForMs };
    if (e.state === 'ejected' || e.state === 'unhealthy' || e.state === 'failing')
      logger.warn(line, TARGET_MESSAGES[e.state]);
    else logger.info(line, TARGET_MESSAGES[e.state]);
  });
  bus.on('auth:result', (e) => {
    if (e.outcome !== 'ok')
      logger.info({ reqId: e.requestId, route: e.routeId, outcome: e.outcome, detail: e.detail }, 'auth refused');
  });
  bus.on('config:reload', (e) =>
    e.ok
      ? logger.info({ file: e.file }, 'configuration reloaded')
      : logger.error(
          { file: e.file, problems: e.problems },
          'configuration reload rejected; keeping the running configuration',
        ),
  );
}

/** Subscribes a warning to event `name` through a repeat limit (repeat-limit.ts). */
function warnRepeatLimited<K extends WarnedEvent>(
  bus: EventBus,
  logger: Logger,
  windowMs: number | undefined,
  name: K,
  warning: RepeatedWarning<GatewayEvents[K]>,
): void {
  const { items } = warning;
  const limited = limitRepeats<GatewayEvents[K]>({
    windowMs,
    items,
    write: (e, repeats) =>
      logger.warn(
        {
          reqId: e.requestId,
          route: e.routeId,
          ...warning.fields(e),
          ...(repeats && { repeated: repeats.lines, ...(items && { repeatedItems: repeats.items }) }),
        },
        warning.message(e),
      ),
  });
  bus.on(name, (e) => limited(warning.key(e), e));
}
