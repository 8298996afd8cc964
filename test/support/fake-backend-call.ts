/**
 * What unit tests of backend call handlers need besides ./exchanges.ts: a response that records
 * what is written to it, and a RouteCall on a fake pool (no sockets: the test plays undici's part).
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CompiledRoute, Exchange } from '../../src/pipeline/types.js';
import type { RouteCall } from '../../src/upstream/call/route-call.js';
import type { BackendPool, Upstream } from '../../src/upstream/types.js';
import { createEventBus, type EventBus, type GatewayEvents } from '../../src/observability/events.js';
import { fakeExchange as sharedExchange, fakeRequest } from './exchanges.js';
import type { Origin } from '../../src/config/types.js';
import { DeadlineSweep } from '../../src/upstream/call/deadlines.js';

/** A response that records its head, body chunks, end and destruction. */
export class RecordingResponse extends EventEmitter {
  head: { status: number; headers: Record<string, string | string[] | number> } | undefined;
  readonly chunks: Buffer[] = [];
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  flushed = false;
  /** What `write` returns: false plays a client that does not read. */
  accepts = true;

  writeHead(status: number, headers: Record<string, string | string[] | number>): this {
    if (this.headersSent) throw new Error('head written twice');
    this.head = { status, headers: { ...headers } };
    this.headersSent = true;
    return this;
  }
  flushHeaders(): void {
    this.flushed = true;
  }
  write(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    return this.accepts;
  }
  end(chunk?: Buffer): this {
    if (chunk !== undefined) this.chunks.push(chunk);
    this.writableEnded = true;
    this.writableFinished = true;
    return this;
  }
  destroy(): this {
    this.destroyed = true;
    return this;
  }
  get body(): string {
    return Buffer.concat(this.chunks).toString();
  }
}

/**
 * An exchange of route `r1` (backend path `/items`) from the shared fakes (./exchanges.ts), with a
 * response that records body chunks and can refuse them (backpressure), as a call handler needs.
 */
export function fakeExchange(method = 'GET'): { ex: Exchange; res: RecordingResponse; req: IncomingMessage } {
  const res = new RecordingResponse();
  const req = Object.assign(fakeRequest({ host: 'gw.example' }, method, '/api/items'), {
    complete: true,
    destroyed: false,
    destroy() {
      this.destroyed = true;
    },
  });
  const ex: Exchange = { ...sharedExchange(fakeRoute, req).ex, res: res as unknown as ServerResponse };
  return { ex, res, req };
}

const fakeRoute = {
  id: 'r1',
  method: 'GET',
  path: { raw: '/items' },
  buildPath: () => '/items',
  editHeaders: { request: undefined, response: undefined },
} as unknown as CompiledRoute;

/** What a fake pool was asked to dispatch. */
export interface Dispatched {
  readonly options: { path: string; method: string; headers: string[] };
}

/**
 * A RouteCall on a one-connection fake pool: `dispatched` lists the calls made, `events` what was
 * reported. The test then plays undici on the handler (onConnect, onHeaders...).
 */
export function fakeCall(overrides: Partial<RouteCall> = {}): RouteCall & {
  readonly pool: BackendPool;
  readonly dispatched: Dispatched[];
  readonly reported: { name: keyof GatewayEvents; event: unknown }[];
} {
  const dispatched: Dispatched[] = [];
  const pool: BackendPool = {
    dispatcher: {
      dispatch(options: Dispatched['options']) {
        dispatched.push({ options });
        return true;
      },
    } as unknown as BackendPool['dispatcher'],
    inFlight: 0,
    connections: 1,
    origin: { key: 'http://backend:8080', hostHeader: 'backend:8080' } as Origin,
  };
  const origin = pool.origin;
  const upstream = { origin, pick: () => pool, pickForStream: () => pool } as unknown as Upstream;
  const events: EventBus = createEventBus();
  const reported: { name: keyof GatewayEvents; event: unknown }[] = [];
  for (const name of ['upstream:response', 'upstream:error', 'client:closed', 'stream:open', 'stream:close'] as const)
    events.on(name, (event) => reported.push({ name, event }));
  return {
    route: fakeRoute,
    upstream,
    dropHeaders: new Set(['host']),
    identityEncoding: false,
    streaming: false,
    method: 'GET',
    headersTimeoutMs: 1_000,
    bodyTimeoutMs: 1_000,
    retries: 0,
    // A clock that stands still: no deadline passes unless a test moves its own.
    deadlines: new DeadlineSweep(() => 0),
    events,
    ...overrides,
    pool,
    dispatched,
    reported,
  };
}

/** undici's raw response header list from an object (repeated names from arrays). */
export function rawHeaders(headers: Record<string, string | string[]>): Buffer[] {
  const out: Buffer[] = [];
  for (const [name, value] of Object.entries(headers))
    for (const v of Array.isArray(value) ? value : [value]) out.push(Buffer.from(name), Buffer.from(v));
  return out;
}
