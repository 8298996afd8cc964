/** The top-level `plugins:` list: TypeScript modules with their options (docs/plugins.md). */
import { z } from 'zod';

/** The name a route's `plugins:` and `config.plugins` use. */
export const PluginNameSchema = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_-]*$/, 'a name: a letter, then letters, digits, - or _')
  .describe('A plugin declared in the top-level plugins: list');

export const PluginEntrySchema = z.strictObject({
  name: PluginNameSchema.describe('The name routes and config.plugins use'),
  module: z
    .string()
    .min(1)
    .describe(
      'The module: a path relative to this config file (./plugins/api-key.ts) or a package name resolved from its folder',
    ),
  options: z
    .unknown()
    .optional()
    .describe("The plugin's options, checked against the schema the plugin declares (definePlugin's options)"),
  timeoutMs: z
    .int()
    .positive()
    .max(60_000)
    .default(1000)
    .describe('Longest time one stage of this plugin may take on a request, else 504 GW_PLUGIN_TIMEOUT'),
});

export const PluginsSchema = z
  .array(PluginEntrySchema)
  .optional()
  .describe('TypeScript plugins: named modules with their options; routes and config.plugins list the names');

/**
 * One entry of the top-level `plugins:` list, as written; src/plugins/load.ts imports the module
 * and checks the options against the schema the plugin declares.
 */
export interface PluginSpec {
  readonly name: string;
  /** As written: a path relative to `baseDir`, or a package name resolved from it. */
  readonly module: string;
  /** The configuration file's folder. */
  readonly baseDir: string;
  /** The options as written (unknown until the plugin's schema checked them). */
  readonly options: unknown;
  /** Longest time one stage of this plugin may take on a request. */
  readonly timeoutMs: number;
  /**
   * Line and column of a key path inside this entry (`['module']`, `['options', 'header']`), or
   * of its key (`key` given); absent when the configuration was compiled without its text.
   */
  readonly locate?: (path: readonly (string | number)[], key?: string) => { line: number; col: number };
}
