/**
 * The access log: one line per request (docs/design-decisions.md: request id, route, status, duration),
 * written to the logger's own destination in pino's exact format (level number, time, the
 * logger's bindings, the fields, `msg`). The line is built here instead of by `logger.info()`:
 * pino's generic serialisation of this one object is a measurable share of the proxy hot path
 * (docs/performance.md); this builder costs a few string concatenations. Every other log line stays pino's.
 */
import { pino, type Logger } from 'pino';
import type { GatewayEvents } from './events.js';

type RequestEnd = GatewayEvents['request:end'];

/** JSON string literals: plain printable ASCII as is, anything else through JSON.stringify. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const json = (s: string): string => (PLAIN.test(s) ? `"${s}"` : JSON.stringify(s));

interface PinoInternals {
  write(line: string): unknown;
}

/** Writes `request:end` events as the logger's `request` lines (info, or warn for 5xx). */
export function accessLogWriter(logger: Logger): (e: RequestEnd) => void {
  const symbols = pino.symbols as unknown as { chindingsSym: symbol; streamSym: symbol };
  const internals = logger as unknown as Record<symbol, unknown>;
  const bindings = internals[symbols.chindingsSym] as string;
  const stream = internals[symbols.streamSym] as PinoInternals;
  const info = logger.levels.values.info!;
  const warn = logger.levels.values.warn!;
  // The line's head changes once a millisecond: made once per millisecond and level, not per line.
  let headMs = -1;
  let headLevel = -1;
  let head = '';
  return (e) => {
    const level = e.status >= 500 ? warn : info;
    // Read per line: the level can change while the gateway runs.
    if (level < logger.levelVal) return;
    const now = Date.now();
    if (now !== headMs || level !== headLevel) {
      headMs = now;
      headLevel = level;
      head = `{"level":${level},"time":${now}${bindings},"reqId":`;
    }
    let line = head + json(e.requestId) + ',"method":' + json(e.method);
    if (e.routeId !== undefined) line += ',"route":' + json(e.routeId);
    line +=
      ',"path":' +
      json(e.path) +
      ',"status":' +
      e.status +
      ',"durationMs":' +
      (Number.isFinite(e.durationMs) ? hundredths(e.durationMs) : 'null');
    if (e.aborted) line += ',"aborted":true';
    if (e.errorCode !== undefined) line += ',"error":' + json(e.errorCode);
    stream.write(line + ',"msg":"request"}\n');
  };
}

/**
 * A duration rounded to hundredths of a millisecond, written as JavaScript writes that number
 * (1, 1.2, 1.23), from integers: converting the double itself is the slow path of number
 * formatting, a measurable part of the line's cost (docs/performance.md).
 */
export function hundredths(ms: number): string {
  const h = Math.round(ms * 100);
  const whole = Math.floor(h / 100);
  const frac = h - whole * 100;
  if (frac === 0) return `${whole}`;
  if (frac % 10 === 0) return `${whole}.${frac / 10}`;
  return frac < 10 ? `${whole}.0${frac}` : `${whole}.${frac}`;
}
