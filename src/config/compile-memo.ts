/**
 * What a compiled configuration remembers for the next reload, so that a reload compiles only what
 * the file changed (docs/operations.md "What a reload rebuilds"): the key of the file without its
 * routes and of every route (./route-key.ts), the identities of TLS files read, and the objects
 * compiled from them. When the rest of the file is the same, its settings, consumers and origins
 * are kept (the same objects, which pipeline/ then compares by identity), and every route whose key
 * is the same keeps its compiled route.
 *
 * Kept beside the configuration, keyed by its frozen route list (which a load's later steps carry
 * over unchanged), so that the configuration itself stays plain data.
 */
import type { ClientTls, CompiledConfig, ConsumerSpec, Origin, RouteSpec } from './types.js';
import type { GatewayFile, GatewaySettings } from './schema.js';
import { exactKey } from './route-key.js';

export interface CompileMemo {
  /** exactKey of the file without its routes. */
  readonly headKey: string;
  readonly fileName: string;
  /** The identities (content hashes) of the TLS files the origins were compiled with. */
  readonly tlsIds: string;
  readonly settings: GatewaySettings;
  readonly upstreamTls: ClientTls | undefined;
  readonly named: ReadonlyMap<string, Origin>;
  /** The origins of plain `service` strings. */
  readonly parsed: ReadonlyMap<string, Origin>;
  readonly consumers: readonly ConsumerSpec[];
  /** Each route's compiled form by its key; a route that reads a file is never kept. */
  readonly specs: ReadonlyMap<string, RouteSpec>;
}

const memos = new WeakMap<readonly RouteSpec[], CompileMemo>();

/** The key of everything in `file` but its routes. */
export function headKeyOf(file: GatewayFile): string {
  return exactKey({ ...file, routes: [] });
}

/** The identities of the upstream TLS the origins were compiled with (each is a hash of its files). */
export function tlsIdsOf(upstreamTls: ClientTls | undefined, named: ReadonlyMap<string, Origin>): string {
  let ids = upstreamTls?.id ?? '';
  for (const origin of named.values()) ids += ` ${origin.upstream?.tls?.id ?? ''}`;
  return ids;
}

/**
 * What `previous` compiled that a load of `fileName` may keep: its memo when the file's head,
 * name and TLS files are the same; undefined otherwise (or when it has none).
 */
export function keptFrom(
  previous: CompiledConfig | undefined,
  head: Pick<CompileMemo, 'headKey' | 'fileName' | 'tlsIds'>,
): CompileMemo | undefined {
  const memo = previous === undefined ? undefined : memos.get(previous.routes);
  if (memo === undefined) return undefined;
  return memo.headKey === head.headKey && memo.fileName === head.fileName && memo.tlsIds === head.tlsIds
    ? memo
    : undefined;
}

export function remember(routes: readonly RouteSpec[], memo: CompileMemo): void {
  memos.set(routes, memo);
}
