/**
 * Where a response's compression (./compress-response.ts) is kept: in the field the gateway's
 * response classes declare (server/gateway-response.ts, like `errorHook`), set from their
 * construction. A WeakMap entry per request is an ephemeron whose value V8's scavenger keeps
 * alive, and with it the response and its whole request, which then got promoted to the old
 * generation: that garbage collection cost more than the gzip encode itself (docs/compression.md,
 * "Speed"). Any other response (the cache's background refresh, a test double) uses a WeakMap:
 * correct, only slower.
 */
import type { ServerResponse } from 'node:http';

/** The field the gateway's response classes declare. */
export interface CompressionSlot {
  compressedAnswer: object | undefined;
}

const others = new WeakMap<ServerResponse, object>();

function hasSlot(res: ServerResponse): res is ServerResponse & CompressionSlot {
  return 'compressedAnswer' in res;
}

export function keepInSlot(res: ServerResponse, answer: object): void {
  if (hasSlot(res)) res.compressedAnswer = answer;
  else others.set(res, answer);
}

export function slotOf(res: ServerResponse): object | undefined {
  return hasSlot(res) ? res.compressedAnswer : others.get(res);
}
