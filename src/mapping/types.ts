/**
 * What the mapping modules share without importing each other: the options a route's JSON shaping
 * is built from (the endpoint, the shaper and the mapping calls all read them).
 */
import type { UpstreamRegistry } from '../upstream/upstream.js';
import type { EventBus } from '../observability/types.js';
import type { Logger } from '../observability/logger.js';
import type { MappingCache } from './cache.js';

/** What shaping a JSON answer needs besides the route (mapping calls, cache, limits). */
export interface JsonShapingOptions {
  readonly events: EventBus;
  readonly upstreams: UpstreamRegistry;
  /** `timeouts.mappingSec` in milliseconds, per mapping call. */
  readonly mappingTimeoutMs: number;
  /** `limits.maxMappingBodyBytes`: larger primary bodies are relayed unchanged. */
  readonly maxBodyBytes: number;
  /** The process-wide cache, or undefined when `mappingCache.enabled` is false. */
  readonly cache: MappingCache | undefined;
  /** `telemetry.propagation`: mapping calls carry the request's `traceparent`/`tracestate`. */
  readonly propagateTrace: boolean;
  /** `limits.connectionsPerOrigin`: mapping calls of one response in flight at once, per origin. */
  readonly connectionsPerOrigin: number;
  /** For what is not an event of its own: enrichment given up (limits, errors). */
  readonly logger: Logger;
}
