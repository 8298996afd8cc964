/** The whole file: `upstreams`, `plugins`, `routes` and `config`. */
import { z } from 'zod';
import { RouteSchema } from './route.js';
import { GatewaySettingsSchema } from './settings.js';
import { UpstreamSchema } from './upstream.js';
import { ConsumersSchema } from './consumers.js';
import { PluginsSchema } from './plugins.js';

export const GatewayFileSchema = z
  .strictObject({
    upstreams: z
      .record(
        z.string().regex(/^[A-Za-z][A-Za-z0-9_-]*$/, 'a name: a letter, then letters, digits, - or _'),
        UpstreamSchema,
      )
      .optional()
      .describe('Named backends with several targets; a route or mapping service names one (docs/upstreams.md)'),
    plugins: PluginsSchema,
    routes: z.array(RouteSchema).describe('The gateway routes'),
    consumers: ConsumersSchema.optional().describe(
      'Who may call with an API key: id, key hashes, claims, plan (docs/consumers.md); or config.consumersFile',
    ),
    config: GatewaySettingsSchema.prefault({}).describe('Settings of the whole gateway'),
  })
  .describe('Portico gateway configuration');

/** The file after validation, with every default applied. */
export type GatewayFile = z.output<typeof GatewayFileSchema>;
