/**
 * The access log: one line per request (docs/design-decisions.md: request id, route, status, duration),
 * written to the logger's own destination in pino's exact format (level number, time, the
 * logger's bindings, the fields, `msg`). The line is made here instead of by `logger.info()`:
 * pino's generic serialisation of this one object is a measurable share of the proxy hot path
 * (docs/performance.md). When the destination is the gateway's line batch (stdout), the line is
 * encoded straight into the batch's buffer (json-bytes.ts): no string is built for it. Any
 * other destination gets the same line as a string. Every other log line stays pino's.
 */
import { pino, type Logger } from 'pino';
import type { GatewayEvents } from './events.js';
import { LineBatch } from './line-batch.js';
import {
  JSON_STRING_MAX_BYTES_PER_UNIT,
  hundredths,
  putBytes,
  putHundredths,
  putJsonString,
  putUint,
} from './json-bytes.js';

type RequestEnd = GatewayEvents['request:end'];

/** JSON string literals: plain printable ASCII as is, anything else through JSON.stringify. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const json = (s: string): string => (PLAIN.test(s) ? `"${s}"` : JSON.stringify(s));

/** The constant parts of a line, once: as text for the string path, as bytes for the batch. */
const PART = {
  method: ',"method":',
  route: ',"route":',
  path: ',"path":',
  status: ',"status":',
  duration: ',"durationMs":',
  null: 'null',
  aborted: ',"aborted":true',
  error: ',"error":',
  end: ',"msg":"request"}\n',
} as const;
const bytes = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const METHOD = bytes(PART.method);
const ROUTE = bytes(PART.route);
const PATH = bytes(PART.path);
const STATUS = bytes(PART.status);
const DURATION = bytes(PART.duration);
const NULL = bytes(PART.null);
const ABORTED = bytes(PART.aborted);
const ERROR = bytes(PART.error);
const END = bytes(PART.end);
/** Every constant part of a line, and the digits of its status and duration. */
const FIXED_BYTES = 160;

interface PinoInternals {
  write(line: string): unknown;
}

/** Writes `request:end` events as the logger's `request` lines (info, or warn for 5xx). */
export function accessLogWriter(logger: Logger): (e: RequestEnd) => void {
  const symbols = pino.symbols as unknown as { chindingsSym: symbol; streamSym: symbol };
  const internals = logger as unknown as Record<symbol, unknown>;
  const bindings = internals[symbols.chindingsSym] as string;
  const stream = internals[symbols.streamSym] as PinoInternals;
  const batch = stream instanceof LineBatch ? stream : undefined;
  const info = logger.levels.values.info!;
  const warn = logger.levels.values.warn!;
  // The line's head changes once a millisecond: made once per millisecond and level, not per line.
  let headMs = -1;
  let headLevel = -1;
  let head = '';
  let headBytes: Uint8Array = new Uint8Array(0);

  const encode = (buf: Buffer, at: number, e: RequestEnd): number => {
    let o = putJsonString(buf, putBytes(buf, at, headBytes), e.requestId);
    o = putJsonString(buf, putBytes(buf, o, METHOD), e.method);
    if (e.routeId !== undefined) o = putJsonString(buf, putBytes(buf, o, ROUTE), e.routeId);
    o = putJsonString(buf, putBytes(buf, o, PATH), e.path);
    o = putUint(buf, putBytes(buf, o, STATUS), e.status);
    o = putBytes(buf, o, DURATION);
    o = Number.isFinite(e.durationMs) ? putHundredths(buf, o, e.durationMs) : putBytes(buf, o, NULL);
    if (e.aborted) o = putBytes(buf, o, ABORTED);
    if (e.errorCode !== undefined) o = putJsonString(buf, putBytes(buf, o, ERROR), e.errorCode);
    return putBytes(buf, o, END);
  };

  return (e) => {
    const level = e.status >= 500 ? warn : info;
    // Read per line: the level can change while the gateway runs.
    if (level < logger.levelVal) return;
    const now = Date.now();
    if (now !== headMs || level !== headLevel) {
      headMs = now;
      headLevel = level;
      head = `{"level":${level},"time":${now}${bindings},"reqId":`;
      headBytes = Buffer.from(head);
    }
    if (batch !== undefined && Number.isSafeInteger(e.status) && e.status >= 0) {
      const units =
        e.requestId.length + e.method.length + (e.routeId?.length ?? 0) + e.path.length + (e.errorCode?.length ?? 0);
      const maxBytes = headBytes.length + FIXED_BYTES + JSON_STRING_MAX_BYTES_PER_UNIT * units;
      if (batch.writeEncoded(maxBytes, encode, e)) return;
    }
    let line = head + json(e.requestId) + PART.method + json(e.method);
    if (e.routeId !== undefined) line += PART.route + json(e.routeId);
    line +=
      PART.path +
      json(e.path) +
      PART.status +
      e.status +
      PART.duration +
      (Number.isFinite(e.durationMs) ? hundredths(e.durationMs) : PART.null);
    if (e.aborted) line += PART.aborted;
    if (e.errorCode !== undefined) line += PART.error + json(e.errorCode);
    stream.write(line + PART.end);
  };
}
