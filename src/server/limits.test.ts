import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { Duplex } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bodyLimitLayer } from '../layers/body-limit.js';
import { clientErrorHandler, serverOptions } from './limits.js';
import type { Exchange } from '../pipeline/types.js';
import { createLogger } from '../observability/logger.js';

const SETTINGS = {
  limits: {
    maxMappingBodyBytes: 1,
    connectionsPerOrigin: 1,
    maxBodyBytes: 100,
    maxHeaderBytes: 8192,
    requestBufferBytes: 65536,
    spillMaxBytes: 1_000_000,
    spillMaxBytesPerClient: 100_000,
  },
  timeouts: {
    backendSec: 30,
    backendIdleSec: 60,
    mappingSec: 10,
    clientHeaderSec: 30,
    clientBodySec: 60,
    keepAliveSec: 72,
  },
};

function exchange(
  headers: Record<string, string>,
  complete = true,
): { ex: Exchange; sent: { status?: number; headers?: Record<string, unknown> } } {
  const sent: { status?: number; headers?: Record<string, unknown> } = {};
  const req = Object.assign(new EventEmitter(), {
    headers,
    complete,
    socket: new EventEmitter(),
  }) as unknown as IncomingMessage;
  const res = {
    headersSent: false,
    writeHead(status: number, h: Record<string, unknown>) {
      sent.status = status;
      sent.headers = h;
      return this;
    },
    end() {},
  } as unknown as ServerResponse;
  return { ex: { req, res, errorCode: undefined } as unknown as Exchange, sent };
}

describe('server limits', () => {
  it('derives the server options from the configuration', () => {
    assert.deepEqual(serverOptions(SETTINGS), {
      keepAliveTimeout: 72_000,
      headersTimeout: 30_000,
      connectionsCheckingInterval: 5_000,
      requestTimeout: 0,
      maxHeaderSize: 8192,
    });
    const fast = serverOptions({ ...SETTINGS, timeouts: { ...SETTINGS.timeouts, clientHeaderSec: 1 } });
    assert.equal(fast.connectionsCheckingInterval, 250);
  });
});

describe('body limit layer', () => {
  const run = async (headers: Record<string, string>) => {
    let calls = 0;
    const { ex, sent } = exchange(headers);
    await bodyLimitLayer(100, 60_000)(async () => void calls++)(ex);
    return { calls, sent, ex };
  };

  it('passes requests without a body', async () => {
    assert.equal((await run({})).calls, 1);
    assert.equal((await run({ 'content-length': '0' })).calls, 1);
  });

  it('passes a declared body within the limit', async () => {
    assert.equal((await run({ 'content-length': '100' })).calls, 1);
  });

  it('refuses a declared body over the limit with 413 and closes the connection', async () => {
    const { calls, sent, ex } = await run({ 'content-length': '101' });
    assert.equal(calls, 0);
    assert.equal(sent.status, 413);
    assert.equal(sent.headers?.connection, 'close');
    assert.equal(sent.headers?.['x-portico-error'], 'GW_BODY_TOO_LARGE');
    assert.equal(ex.errorCode, 'GW_BODY_TOO_LARGE');
  });
});

describe('client error handler', () => {
  it('answers in the JSON shape with a generated X-Request-ID, then ends the socket', async () => {
    const written: Buffer[] = [];
    const socket = new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        written.push(Buffer.from(chunk));
        cb();
      },
      final(cb) {
        this.push(null);
        cb();
      },
    });
    clientErrorHandler(createLogger({ level: 'silent' }))(
      Object.assign(new Error('Header overflow'), { code: 'HPE_HEADER_OVERFLOW' }),
      socket,
    );
    await new Promise((r) => socket.once('finish', r));
    const text = Buffer.concat(written).toString('utf8');
    assert.ok(text.startsWith('HTTP/1.1 431 Request Header Fields Too Large\r\n'), text);
    assert.match(text, /\r\nx-request-id: [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\r\n/);
    assert.match(text, /\r\nx-portico-error: GW_HEADERS_TOO_LARGE\r\n/);
    assert.match(text, /\r\n\r\n\{"error":"Request headers too large","success":false\}$/);
    socket.destroy();
  });
});
