/**
 * Imported first by the CLI entry, so that the flags are set before undici, zod and the rest load
 * (ES modules evaluate in import order). The library entry (src/gateway.ts) never imports it: a
 * host process keeps its own V8 settings. `PORTICO_V8_TUNING=off` leaves V8 as node starts it
 * (Node documents flag changes after start-up as unsupported; this is the way out should a
 * future release disagree).
 */
import { applyV8Tuning, tuningWanted } from './v8-tuning.js';

// The tuning is for a long-running gateway's memory; a command that reads a file and exits
// (check, routes, token, init, status) would only pay its extra collections: 30,000 routes
// check in 6.2-8.0 s of CPU without it against 9.0-9.4 s with it.
const ONE_SHOT = new Set(['check', 'routes', 'status', 'token', 'init']);
const serves = !process.argv.slice(2).some((arg) => ONE_SHOT.has(arg));
if (serves && tuningWanted(process.env.PORTICO_V8_TUNING)) applyV8Tuning(process.execArgv, process.env.NODE_OPTIONS);
