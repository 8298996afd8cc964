/**
 * A JSON response rewrite as a plugin (docs/plugins.md): fields the clients must not see are
 * removed from the backend's JSON answers, at any depth, and each answer says it was redacted.
 */
import { definePlugin, z } from 'portico';

export default definePlugin({
  name: 'json-redact',
  options: z.object({
    /** Removed from every object of the answer, at any depth. */
    remove: z.array(z.string()).default([]),
  }),
  // The route buffers its 2xx JSON answers for this plugin, up to 1 MiB (a larger one is a 502).
  capabilities: { jsonResponse: { maxBytes: 1024 * 1024 } },

  onResponseBody({ json, options, response }) {
    response.setHeader('x-redacted', 'true');
    return redact(json, new Set(options.remove));
  },
});

/** `value` without the fields of `names`, in every object it holds. */
function redact(value: unknown, names: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => redact(item, names));
  if (typeof value !== 'object' || value === null) return value;
  const kept = Object.entries(value).filter(([name]) => !names.has(name));
  return Object.fromEntries(kept.map(([name, item]) => [name, redact(item, names)]));
}
