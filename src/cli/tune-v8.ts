/**
 * Imported first by the CLI entry, so that the flags are set before undici, zod and the rest load
 * (ES modules evaluate in import order). The library entry (src/gateway.ts) never imports it: a
 * host process keeps its own V8 settings. `PORTICO_V8_TUNING=off` leaves V8 as node starts it
 * (Node documents flag changes after start-up as unsupported; this is the way out should a
 * future release disagree).
 */
import { applyV8Tuning, tuningWanted } from './v8-tuning.js';

if (tuningWanted(process.env.PORTICO_V8_TUNING)) applyV8Tuning(process.execArgv, process.env.NODE_OPTIONS);
