/**
 * An API-key check as a plugin (docs/plugins.md): the client sends its key in a header; a known
 * key lets the request through and tells the backend who the consumer is, any other is refused
 * with the gateway's own 401 before authentication runs.
 */
import { timingSafeEqual } from 'node:crypto';
import { definePlugin, z } from 'portico';

export default definePlugin({
  name: 'api-key',
  options: z.object({
    /** The header the key travels in. */
    header: z.string().default('x-api-key'),
    /** Each key, and the consumer it belongs to. */
    keys: z.record(z.string().min(16), z.string()),
    /** The header that tells the backend who called. */
    consumerHeader: z.string().default('x-consumer'),
  }),

  onRequest({ request, options, log }) {
    const sent = request.header(options.header);
    if (sent === undefined) return { error: 'GW_AUTH_MISSING', message: `Missing ${options.header} header` };
    if (consumerOf(sent, options.keys) === undefined) {
      log.info('unknown API key', { client: request.clientAddress });
      return { error: 'GW_AUTH_INVALID', message: 'Unknown API key' };
    }
  },

  beforeUpstream({ request, options, upstream }) {
    // onRequest let only known keys through, so the key has a consumer here.
    upstream.setHeader(options.consumerHeader, consumerOf(request.header(options.header)!, options.keys)!);
    // The backend needs no key: it trusts the gateway.
    upstream.removeHeader(options.header);
  },
});

/** The key's consumer, compared in constant time so that timing tells nothing about the keys. */
function consumerOf(sent: string, keys: Readonly<Record<string, string>>): string | undefined {
  const given = Buffer.from(sent);
  for (const [key, consumer] of Object.entries(keys)) {
    const known = Buffer.from(key);
    if (known.length === given.length && timingSafeEqual(known, given)) return consumer;
  }
  return undefined;
}
