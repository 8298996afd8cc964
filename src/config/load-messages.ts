/**
 * What the worker of ./load-worker.ts sends ./load-off-thread.ts: plain data only. The main thread
 * sends 'more' for each next message of routes.
 */
import type { Problem } from './problems.js';
import type { GatewayFile, RouteConfig } from './schema.js';

/**
 * Routes per message: each message is taken by the main thread in one stretch (its structured
 * clone read back), a few ms for this many routes of ordinary size.
 */
export const ROUTES_PER_MESSAGE = 250;

export interface LoadRequest {
  readonly file: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

export type LoadMessage =
  | { readonly kind: 'problems'; readonly problems: readonly Problem[] }
  | {
      readonly kind: 'head';
      /** The validated file without its routes, which follow in `routes` messages. */
      readonly file: GatewayFile;
      readonly notices: readonly Problem[];
      readonly telemetryKeys: readonly string[];
      /** The file's text when it has plugins, whose options are located once their modules are imported. */
      readonly text: string | undefined;
    }
  | { readonly kind: 'routes'; readonly routes: readonly RouteConfig[] }
  | { readonly kind: 'end' };
