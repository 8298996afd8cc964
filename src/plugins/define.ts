/**
 * `definePlugin`: how a plugin module declares itself (docs/plugins.md). It only checks the shape
 * and marks it; the gateway imports the module, checks the configuration's options against
 * `options`, and runs the stages (src/plugins/run.ts).
 *
 * @example
 * import { definePlugin, z } from 'portico';
 * export default definePlugin({
 *   options: z.object({ header: z.string().default('x-api-key') }),
 *   onRequest({ request, options }) {
 *     if (request.header(options.header) === undefined) return { error: 'GW_AUTH_MISSING' };
 *   },
 * });
 */
import type { z } from 'zod';
import type { Plugin, PluginDefinition, PluginStage } from './types.js';

export const STAGES: readonly PluginStage[] = [
  'onRequest',
  'onAuthenticated',
  'beforeUpstream',
  'onResponse',
  'onResponseBody',
  'onError',
];

/** Declares a plugin: its options' schema and its stages, with full types for both. */
export function definePlugin<Schema extends z.ZodType | undefined = undefined>(
  definition: PluginDefinition<Schema>,
): Plugin<Schema> {
  for (const stage of STAGES)
    if (definition[stage] !== undefined && typeof definition[stage] !== 'function')
      throw new TypeError(`definePlugin: ${stage} must be a function`);
  // A body transform is explicit: the route buffers its answers only for a plugin that says so.
  if (definition.onResponseBody !== undefined && !definition.capabilities?.jsonResponse)
    throw new TypeError('definePlugin: onResponseBody needs capabilities: { jsonResponse: true } (docs/plugins.md)');
  return Object.freeze({ ...definition, '~portico': 'plugin' as const });
}

/** Whether a module's default export is a plugin (made by this or another copy of `definePlugin`). */
export function isPlugin(value: unknown): value is Plugin {
  return typeof value === 'object' && value !== null && (value as { '~portico'?: unknown })['~portico'] === 'plugin';
}
