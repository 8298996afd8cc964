/**
 * Header rewrites as a plugin (docs/plugins.md): a header for the backend, headers on the way
 * back, and a JSON body of your own on the gateway's errors.
 */
import { definePlugin, z } from 'portico';

export default definePlugin({
  name: 'response-headers',
  options: z.object({
    /** Set on every answer. */
    set: z.record(z.string(), z.string()).default({}),
    /** Removed from every answer (the backend's `server`, `x-powered-by`...). */
    remove: z.array(z.string()).default([]),
    /** Where the client's path came in, for the backend's logs. */
    tagRequests: z.boolean().default(true),
  }),

  beforeUpstream({ request, options, upstream }) {
    if (options.tagRequests) upstream.setHeader('x-gateway-route', request.routeId);
  },

  onResponse({ response, options }) {
    for (const name of options.remove) response.removeHeader(name);
    for (const [name, value] of Object.entries(options.set)) response.setHeader(name, value);
  },

  onError({ error, request }) {
    // The gateway's errors in this API's own shape.
    return Response.json(
      { problem: error.code, detail: error.message, requestId: request.requestId },
      { status: error.status, headers: { 'x-portico-error': error.code } },
    );
  },
});
