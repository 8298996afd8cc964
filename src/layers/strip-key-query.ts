/**
 * On a route that reads no API key (a public route), the key's query parameter is still taken
 * out (docs/consumers.md "API keys"): a key a client sent there goes no further than the gateway.
 * Only configurations with `auth.apiKey.query` give public routes this layer.
 */
import type { Layer } from '../pipeline/types.js';
import type { ApiKeySource } from '../auth/api-key-source.js';

/** Removes the key parameter from the query before `next`. */
export function stripKeyQueryLayer(source: ApiKeySource): Layer {
  return (next) => (ex) => {
    if (ex.rawQuery !== '') ex.rawQuery = source.strip(ex.req, ex.rawQuery);
    return next(ex);
  };
}
