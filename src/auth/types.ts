/**
 * The AUTH CONTRACT shared by the HTTP auth layer and the WebSocket upgrade: one Authenticator per
 * configuration (auth/authenticator.ts chooses it). A refusal carries a complete response (a
 * gateway JSON error, or the auth service's answer relayed as-is), so any writer
 * (ServerResponse or raw socket) can send it unchanged. Types only, so any module can import it.
 */
import type { IncomingMessage } from 'node:http';
import type { ErrorCode } from '../response/errors.js';

export type AuthOutcome =
  // `claims`: the token's payload (or the auth service's JSON object), for authorization rules.
  | { ok: true; claimHeaders: [string, string][]; claims?: Readonly<Record<string, unknown>> }
  // `detail` (optional, for logs and the auth:result event) is an addition to the shared contract.
  | { ok: false; status: number; headers: Record<string, string>; body: Buffer; code?: ErrorCode; detail?: string };

export interface Authenticator {
  /**
   * `routeId` (an addition to the shared contract) labels the auth service call in the metrics.
   * An answer known without waiting (a cached token, a missing header) may come back as a plain
   * value: the request then goes on without a promise and a microtask turn.
   */
  authenticate(req: IncomingMessage, requestId: string, routeId?: string): AuthOutcome | Promise<AuthOutcome>;
  close?(): Promise<void>;
}

/**
 * A route's `require:` rules, compiled (auth/requirements.ts): undefined when the claims satisfy
 * every rule, else why not (for logs, never for the client).
 */
export type ClaimCheck = (claims: Readonly<Record<string, unknown>>) => string | undefined;
