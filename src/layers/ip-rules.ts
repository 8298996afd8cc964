/**
 * Client address rules (`config.ipRules`, a route's `ipRules`; docs/security.md "IP allow and
 * deny lists"): a refused client gets 403 `GW_IP_FORBIDDEN` before any other layer runs. The
 * rules are compiled once per configuration; a route without rules has no such layer.
 */
import type { IncomingMessage } from 'node:http';
import type { IpRulesConfig } from '../config/schema.js';
import type { Layer } from '../pipeline/types.js';
import { createAddressTest, type ClientIpResolver } from '../server/client-ip.js';
import { sendError } from '../response/send-error.js';

/** True when the rules refuse the request's client. */
export type ClientRefusal = (req: IncomingMessage) => boolean;

/**
 * The test of an address: refused when `deny` holds it (deny wins), or when `allow` is not empty
 * and does not hold it. An address that is not one (an empty peer) is refused by any allow list.
 */
export function compileIpRules(rules: IpRulesConfig): (address: string) => boolean {
  const denied = createAddressTest(rules.deny);
  if (rules.allow.length === 0) return denied;
  const allowed = createAddressTest(rules.allow);
  return (address) => denied(address) || !allowed(address);
}

/** The rules applied to a request's client, as `clientAddress` finds it (`trustProxy`). */
export function clientRefusal(rules: IpRulesConfig, clientAddress: ClientIpResolver): ClientRefusal {
  const refuses = compileIpRules(rules);
  return (req) => refuses(clientAddress(req));
}

/** Answers 403 `GW_IP_FORBIDDEN` to a refused client, without reading its body or calling `next`. */
export function ipRulesLayer(refuses: ClientRefusal): Layer {
  return (next) => (ex) => {
    if (!refuses(ex.req)) return next(ex);
    ex.errorCode = 'GW_IP_FORBIDDEN';
    sendError(ex.res, 'GW_IP_FORBIDDEN');
    return Promise.resolve();
  };
}
