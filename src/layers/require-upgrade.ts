/** The layer that lets only WebSocket handshakes reach a WebSocket route's endpoint. */
import type { Layer } from '../pipeline/types.js';
import { sendError } from '../response/send-error.js';

/**
 * The gate of a WebSocket route: a plain request (no handshake, or one Node did not hand over as
 * an upgrade) is answered 426 with `Upgrade: websocket`, before the circuit, so that it neither
 * takes a probe slot nor reaches the backend (docs/design-decisions.md).
 */
export function requireUpgradeLayer(): Layer {
  return (next) => (ex) => {
    if (ex.upgrade !== undefined) return next(ex);
    ex.errorCode = 'GW_UPGRADE_REQUIRED';
    sendError(ex.res, 'GW_UPGRADE_REQUIRED', { upgrade: 'websocket', connection: 'Upgrade' });
    return Promise.resolve();
  };
}
