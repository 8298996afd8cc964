/** What the router hands the server: the route entries it is built from, and a match. Types only. */
import type { CompiledRoute, Step } from '../pipeline/types.js';

export interface RouteEntry {
  readonly route: CompiledRoute;
  /** The route's pipeline, for every kind of request it gets (WebSocket handshakes too). */
  readonly run: Step;
}

export type Match =
  | { readonly kind: 'found'; readonly entry: RouteEntry; readonly params: Record<string, string> }
  | { readonly kind: 'method-not-allowed'; readonly allow: string }
  /** A route matched, but a parameter's decoded value is a dot-segment (`..`): refused with 400. */
  | { readonly kind: 'bad-parameter'; readonly param: string }
  /** A prefix route matched, but the rest of the path is ambiguous (./prefix-rest.ts): 400. */
  | { readonly kind: 'bad-path' }
  /** No route serves the request's host, and every route names its hosts: 404. */
  | { readonly kind: 'host-not-found' }
  /** Not the router's: the connection's TLS certificate is not the one for this host (421). */
  | { readonly kind: 'misdirected' }
  | { readonly kind: 'not-found' };
