/**
 * A backend may send 1xx informational answers before its final one, even unasked (RFC 9110
 * 15.2: a client must parse them and may ignore them), and nginx skips them. undici's HTTP/1.1
 * client refuses an unsolicited `100 Continue` outright ("bad response", a 502 to the client), so
 * every pool's connections are made by this connector, which takes the 1xx heads out of the bytes
 * before undici reads them. A `101 Switching Protocols` is left alone: it starts an upgrade. No
 * 1xx is relayed to the client (docs/security.md, "1xx").
 *
 * Where an answer starts: a pool sends one request at a time on a connection, so an answer starts
 * with the first byte read after a request head was written. Only there is a 1xx head looked for;
 * from the first byte that cannot begin one, everything passes untouched until the next request
 * head. Bodies are never scanned. HTTP/2 connections are left alone (their 1xx are frames that
 * undici already skips).
 */
import type { Socket } from 'node:net';
import { buildConnector } from 'undici';

/** The longest 1xx head held back; a longer one goes to undici, whose own head limit refuses it. */
const MAX_INFORMATIONAL_HEAD = 16 * 1024;
const VERSION = 'HTTP/1.';
const END_OF_HEAD = Buffer.from('\r\n\r\n');

/** undici's connector for `options`, whose HTTP/1.1 connections skip a backend's 1xx heads. */
export function skipInformationalConnector(options: buildConnector.BuildOptions = {}): buildConnector.connector {
  const connect = buildConnector(options);
  return (target, callback) =>
    connect(target, (...args) => {
      // undici calls back with the error alone when the connection failed.
      const [err, socket] = args;
      if (err === null && !('alpnProtocol' in socket && socket.alpnProtocol === 'h2')) skipInformational(socket);
      callback(...args);
    });
}

/**
 * Makes `socket.read()` skip the 1xx heads (other than 101) at the start of each answer; a request
 * head is a string written by undici (body chunks are buffers, chunk framing starts with CRLF).
 */
export function skipInformational(socket: Socket): void {
  const read = socket.read;
  const write = socket.write;
  let atStart = false;
  let held: Buffer | undefined;
  // Three parameters, not a rest list: a write per request head and per body chunk, and
  // Writable.write reads an absent encoding or callback as it reads an undefined one.
  socket.write = function (this: Socket, chunk: unknown, encoding?: unknown, cb?: unknown): boolean {
    if (typeof chunk === 'string' && chunk.charCodeAt(0) !== 13) atStart = true;
    return (write as (...args: unknown[]) => boolean).call(this, chunk, encoding, cb);
  } as Socket['write'];
  socket.read = function (this: Socket, size?: number): unknown {
    for (;;) {
      const chunk = read.call(this, size) as Buffer | null;
      if (!atStart || chunk === null) return chunk;
      const bytes = held === undefined ? chunk : Buffer.concat([held, chunk]);
      const { skip, final } = informationalPrefix(bytes);
      const rest = skip === 0 ? bytes : bytes.subarray(skip);
      held = undefined;
      if (final) {
        atStart = false;
        return rest;
      }
      if (rest.length > 0) held = rest;
    }
  } as Socket['read'];
}

/**
 * How many bytes of 1xx heads `bytes`, the start of an answer, begins with, and whether what
 * follows them is a final answer (passed on as it is) or too short to tell.
 */
function informationalPrefix(bytes: Buffer): { readonly skip: number; readonly final: boolean } {
  let at = 0;
  for (;;) {
    const kind = statusLineAt(bytes, at);
    if (kind !== 'informational') return { skip: at, final: kind === 'final' };
    const end = bytes.indexOf(END_OF_HEAD, at);
    if (end < 0) return { skip: at, final: bytes.length - at > MAX_INFORMATIONAL_HEAD };
    at = end + END_OF_HEAD.length;
  }
}

/**
 * Whether the bytes at `at` begin the status line of a 1xx other than 101 (`HTTP/1.0` or
 * `HTTP/1.1`, SP, `1`, two digits, SP or CR), of anything else, or are too few to tell.
 */
function statusLineAt(bytes: Buffer, at: number): 'informational' | 'final' | 'more' {
  for (let i = 0; i < 13; i++) {
    const c = bytes[at + i];
    if (c === undefined) return 'more';
    if (!statusLineByte(i, c)) return 'final';
  }
  return bytes[at + 10] === 0x30 && bytes[at + 11] === 0x31 ? 'final' : 'informational';
}

function statusLineByte(i: number, c: number): boolean {
  if (i < 7) return c === VERSION.charCodeAt(i);
  if (i === 7) return c === 0x30 || c === 0x31;
  if (i === 8) return c === 0x20;
  if (i === 9) return c === 0x31;
  if (i < 12) return c >= 0x30 && c <= 0x39;
  return c === 0x20 || c === 0x0d;
}
