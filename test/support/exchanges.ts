/**
 * Exchanges and fake `next` steps for unit tests of layers and pipelines, with no network: an
 * HTTP exchange writes into a recording response, a WebSocket handshake into a RecordingSocket.
 * The three fake `next`s: one that records what reached it, one that must never run, one that
 * waits until the test lets it finish.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CompiledRoute, Exchange } from '../../src/pipeline/types.js';
import { createExchange } from '../../src/pipeline/exchange.js';
import { responseOnSocket } from '../../src/server/socket-response.js';
import { GatewayResponse, stampRequestId } from '../../src/server/gateway-response.js';
import { RecordingSocket } from './recording-socket.js';

/** What a fake response was given: its status, every header (lower-case names) and its body. */
export interface RecordedResponse {
  status: number | undefined;
  readonly headers: Record<string, unknown>;
  body: Buffer | undefined;
}

/** A request head: headers by lower-case name, the client at 10.0.0.7. */
export function fakeRequest(headers: Record<string, string> = {}, method = 'GET', url = '/'): IncomingMessage {
  const rawHeaders = Object.entries(headers).flat();
  const socket = { remoteAddress: '10.0.0.7', once() {} };
  return { method, url, headers, rawHeaders, socket, resume() {} } as unknown as IncomingMessage;
}

/** A ServerResponse double that records what the layers write. */
export function fakeResponse(): { res: ServerResponse; written: RecordedResponse } {
  const written: RecordedResponse = { status: undefined, headers: {}, body: undefined };
  const res = {
    statusCode: 200,
    headersSent: false,
    destroyed: false,
    writableEnded: false,
    setHeader(name: string, value: unknown) {
      written.headers[name.toLowerCase()] = value;
      return res;
    },
    getHeader: (name: string) => written.headers[name.toLowerCase()],
    writeHead(status: number, headers?: Record<string, unknown>) {
      written.status = res.statusCode = status;
      for (const [name, value] of Object.entries(headers ?? {})) written.headers[name.toLowerCase()] = value;
      res.headersSent = true;
      return res;
    },
    end(body?: Buffer) {
      written.body = body;
      res.writableEnded = true;
    },
    destroy() {
      res.destroyed = true;
    },
    once: () => res,
    on: () => res,
    off: () => res,
  };
  return { res: res as unknown as ServerResponse, written };
}

/** An HTTP exchange of `route` with a recording response; `resumed()` counts body drains. */
export function fakeExchange(
  route: CompiledRoute,
  req: IncomingMessage = fakeRequest(),
): { ex: Exchange; written: RecordedResponse; resumed(): number } {
  const { res, written } = fakeResponse();
  let resumed = 0;
  req.resume = () => (resumed++, req);
  const ex = exchangeOf(route, req, res, undefined);
  return { ex, written, resumed: () => resumed };
}

/**
 * A WebSocket handshake of `route`: its response is the gateway's own response on a socket
 * (server/socket-response.ts), bound to a RecordingSocket that keeps the bytes the client gets.
 */
export function fakeUpgradeExchange(
  route: CompiledRoute,
  req: IncomingMessage = fakeRequest({ host: 'gw', connection: 'Upgrade', upgrade: 'websocket' }),
): { ex: Exchange; socket: RecordingSocket } {
  const socket = new RecordingSocket();
  const res = responseOnSocket(GatewayResponse, req, socket);
  stampRequestId(res, 'rid-1');
  const ex = exchangeOf(route, req, res, { socket, head: Buffer.alloc(0), switched: false });
  return { ex, socket };
}

/** A new exchange of request `rid-1`, with nothing yet recorded on it. */
function exchangeOf(
  route: CompiledRoute,
  req: IncomingMessage,
  res: ServerResponse,
  upgrade: Exchange['upgrade'],
): Exchange {
  return createExchange(route, req, res, upgrade, 'rid-1', {}, '');
}

/** A `next` that records every exchange that reached it. */
export function recordingNext<E>(): { next: (e: E) => Promise<void>; seen: E[] } {
  const seen: E[] = [];
  return { next: async (e) => void seen.push(e), seen };
}

/** A `next` the chain must have stopped before. */
export function neverRuns<E>(): (e: E) => Promise<void> {
  return async () => assert.fail('next must not run');
}

/**
 * A `next` that runs `onStart` (to record an outcome on the exchange), then waits until `finish()`:
 * what a layer does while its endpoint is still busy. `started` resolves once it runs.
 */
export function waitingNext<E>(onStart: (e: E) => void = () => {}): {
  next: (e: E) => Promise<void>;
  started: Promise<E>;
  finish(): void;
} {
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  let markStarted!: (e: E) => void;
  const started = new Promise<E>((r) => (markStarted = r));
  return {
    next: async (e) => {
      onStart(e);
      markStarted(e);
      await finished;
    },
    started,
    finish: () => finish(),
  };
}
