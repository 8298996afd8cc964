/**
 * Imported first by the CLI entry, so that the flags are set before undici, zod and the rest load
 * (ES modules evaluate in import order). The library entry (src/gateway.ts) never imports it: a
 * host process keeps its own V8 settings.
 */
import { applyV8Tuning } from './v8-tuning.js';

applyV8Tuning(process.execArgv, process.env.NODE_OPTIONS);
