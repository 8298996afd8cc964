/**
 * The keys of each route that the route rules read, narrowed from the parsed YAML once. A key
 * of the wrong type reads as absent here (the schema reports it), so the other rules of the
 * same route still run: one mistake never hides another.
 */
import { isRecord } from './raw-value.js';

/** One route's keys, each present only when it has the type the schema wants. */
export interface RouteFields {
  /** Position in `routes`, for messages and key paths. */
  readonly index: number;
  /** Any text, also one that is not a method: the WebSocket rule names every non-GET. */
  readonly method?: string;
  readonly route?: string;
  readonly path?: string;
  readonly service?: string;
  /** True only when written as `true`. */
  readonly isSSE: boolean;
  readonly isWebSocket: boolean;
  /** `compression: true` as written. */
  readonly compressionOn: boolean;
  /** `cache:` present and not `false`. */
  readonly cacheOn: boolean;
  /** Present when `mapping` is a list; an entry that is not a mapping is undefined. */
  readonly mapping?: readonly (MappingRuleFields | undefined)[];
  /** Present when `hosts` is a list; an entry that is not text is undefined. */
  readonly hosts?: readonly (string | undefined)[];
  /** True when `backends` is written (an aggregated route). */
  readonly hasBackends: boolean;
}

/** One mapping rule's keys; empty text reads as absent (the schema reports it as empty). */
export interface MappingRuleFields {
  readonly path?: string;
  readonly service?: string;
  /** Present when `batch` is a mapping. */
  readonly batch?: { readonly path?: string; readonly separator?: string };
}

/** The routes of the parsed file; a list entry that is not a mapping is skipped. */
export function readRouteFields(routes: unknown): RouteFields[] {
  if (!Array.isArray(routes)) return [];
  const out: RouteFields[] = [];
  routes.forEach((route: unknown, index: number) => {
    if (!isRecord(route)) return;
    out.push({
      index,
      ...text('method', route.method),
      ...text('route', route.route),
      ...text('path', route.path),
      ...text('service', route.service),
      isSSE: route.isSSE === true,
      isWebSocket: route.isWebSocket === true,
      compressionOn: route.compression === true,
      cacheOn: route.cache !== undefined && route.cache !== false,
      ...(Array.isArray(route.mapping) ? { mapping: route.mapping.map(readMappingRule) } : {}),
      ...(Array.isArray(route.hosts)
        ? { hosts: route.hosts.map((h: unknown) => (typeof h === 'string' ? h : undefined)) }
        : {}),
      hasBackends: route.backends !== undefined,
    });
  });
  return out;
}

function readMappingRule(rule: unknown): MappingRuleFields | undefined {
  if (!isRecord(rule)) return undefined;
  return {
    ...nonEmpty('path', rule.path),
    ...nonEmpty('service', rule.service),
    ...(isRecord(rule.batch)
      ? { batch: { ...nonEmpty('path', rule.batch.path), ...nonEmpty('separator', rule.batch.separator) } }
      : {}),
  };
}

function text<K extends string>(key: K, value: unknown): { [P in K]?: string } {
  return (typeof value === 'string' ? { [key]: value } : {}) as { [P in K]?: string };
}

function nonEmpty<K extends string>(key: K, value: unknown): { [P in K]?: string } {
  return value === '' ? {} : text(key, value);
}
