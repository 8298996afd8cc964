/**
 * What ./load-off-thread.ts and its worker (./load-worker.ts) send each other: plain data only.
 */
import type { Problem } from './problems.js';
import type { GatewayFile } from './schema.js';
import type { RouteSource } from './route-key.js';

/**
 * Routes per message: each message is taken by the main thread in one stretch (its structured
 * clone read back), well under a ms for this many routes of ordinary size, sent as JSON text.
 */
export const ROUTES_PER_MESSAGE = 250;

/** A file to load, or the next message of routes of the last one. */
export type ToLoadWorker =
  | { readonly kind: 'load'; readonly file: string; readonly env: Readonly<Record<string, string | undefined>> }
  | { readonly kind: 'more' };

export type LoadMessage =
  | { readonly kind: 'problems'; readonly problems: readonly Problem[] }
  | {
      readonly kind: 'head';
      /** The validated file without its routes, which follow in `routes` messages. */
      readonly file: GatewayFile;
      /** `headKeyOf` the file (./compile-memo.ts). */
      readonly headKey: string;
      readonly notices: readonly Problem[];
      readonly telemetryKeys: readonly string[];
      /** The file's text when it has plugins, whose options are located once their modules are imported. */
      readonly text: string | undefined;
    }
  | { readonly kind: 'routes'; readonly routes: readonly RouteSource[] }
  | { readonly kind: 'end' };
