/**
 * HTTP/1.1 responses on a raw socket. An `upgrade` request has no ServerResponse (Node hands over
 * the bare socket): it gets one bound to its socket, and the `101 Switching Protocols` head is
 * written here. Answers to what never became a request (a CONNECT, a head Node's parser refused)
 * are formatted here too. Header values come from Node's or undici's parsers or from the gateway
 * itself, so they hold no CR/LF.
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Exchange } from '../pipeline/types.js';

export type HeaderValue = string | number | readonly string[];

/** Seconds a refused client gets to read the answer and close before the socket is destroyed. */
const LINGER_MS = 5_000;

/** `HTTP/1.1 <status> <reason>` plus the headers and the blank line. */
export function responseHead(
  status: number,
  headers: Record<string, HeaderValue | undefined> | readonly string[],
  reason?: string,
): string {
  let head = `HTTP/1.1 ${status} ${reason ?? STATUS_CODES[status] ?? ''}\r\n`;
  if (Array.isArray(headers)) {
    const flat = headers as readonly string[];
    for (let i = 0; i + 1 < flat.length; i += 2) head += `${flat[i]}: ${flat[i + 1]}\r\n`;
  } else {
    const record = headers as Record<string, HeaderValue | undefined>;
    for (const name in record) {
      const value = record[name];
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value as readonly string[]) head += `${name}: ${v}\r\n`;
      else head += `${name}: ${String(value)}\r\n`;
    }
  }
  return `${head}\r\n`;
}

/**
 * Writes a complete response and closes the connection (an upgrade socket serves one answer).
 * The socket is ended, not destroyed, so the client reads the whole answer; it is destroyed once
 * the client closed too, or after a short linger.
 */
export function sendOnSocket(
  socket: Duplex,
  status: number,
  headers: Record<string, HeaderValue | undefined>,
  body: Buffer | undefined,
): void {
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const head = responseHead(status, { ...headers, date: new Date().toUTCString(), connection: 'close' });
  socket.write(head);
  closeAfter(socket, body);
}

/** The ServerResponse class of the listener (the gateway's, with HSTS over TLS). */
export type ResponseClass = new (req: IncomingMessage) => ServerResponse;

/**
 * A ServerResponse that writes onto the raw socket of an upgrade, so that the layers answer a
 * WebSocket handshake as they answer any request. It serves one answer: `Connection: close`, and
 * the socket is ended once the answer is written. It reports 'close' as Node's own responses do:
 * right after the answer went out, or when the client left before it.
 */
export function responseOnSocket(Response: ResponseClass, req: IncomingMessage, socket: Duplex): ServerResponse {
  const res = new Response(req);
  res.shouldKeepAlive = false;
  if (socket.destroyed) {
    // The client left before the handshake was read: nothing can be written, the close is reported.
    res.destroy();
    process.nextTick(() => res.emit('close'));
    return res;
  }
  res.assignSocket(socket as Socket);
  res.once('finish', () => {
    res.detachSocket(socket as Socket);
    closeAfter(socket);
    process.nextTick(() => res.emit('close'));
  });
  return res;
}

/**
 * Answers an upgrade with `101 Switching Protocols` and the backend's `headers`, written straight
 * onto the socket, which leaves the exchange's response for the tunnel: the response reports
 * 'close' at once, so the request is logged and counted when the tunnel opens, not when it ends.
 */
export function switchProtocols(ex: Exchange, headers: readonly string[], reason: string | undefined): void {
  const upgrade = ex.upgrade!;
  const { res } = ex;
  upgrade.switched = true;
  res.statusCode = 101;
  res.detachSocket(upgrade.socket as Socket);
  upgrade.socket.write(responseHead(101, headers, reason));
  res.emit('close');
}

/** Ends the socket after `last` (if any) and destroys it once the peer closed or after a linger. */
export function closeAfter(socket: Duplex, last?: Buffer): void {
  // Keep reading so the client's FIN is seen and the socket closes on its own.
  socket.resume();
  if (last !== undefined && last.length > 0) socket.end(last);
  else socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** What a server socket carries while Node serves HTTP on it (fields Node sets on the socket). */
interface ServingSocket extends Duplex {
  /** The response being written on the socket now; later pipelined ones wait their turn. */
  _httpMessage?: {
    readonly req?: unknown;
    readonly headersSent: boolean;
    once(event: 'finish', fn: () => void): unknown;
  } | null;
}

/**
 * Calls `then` once every response ahead of `stopAt` on this connection has been written: the
 * answers to complete requests that came before a malformed one are the client's and go out in
 * order, whole. Node hands the socket to the next pipelined response in its own 'finish' listener,
 * which runs before this one, so the socket's current response is re-read each time. The wait is
 * bounded by those responses, which the backend timeouts bound in turn.
 * `then` gets the response of `stopAt` if the socket has reached it, else undefined.
 */
export function afterAnswersBefore(
  socket: Duplex,
  stopAt: unknown,
  then: (current: { headersSent: boolean } | undefined) => void,
): void {
  const step = (): void => {
    const current = (socket as ServingSocket)._httpMessage ?? undefined;
    if (current === undefined || current.req === stopAt || socket.destroyed) then(current);
    else current.once('finish', step);
  };
  step();
}
