import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, constants, createServer as createH2Server } from 'node:http2';
import { createLogger } from '../observability/logger.js';
import { GatewayResponse, stampRequestId } from './gateway-response.js';
import { GatewayH2Response, loggedH2Response } from './h2-response.js';
import { serveStreams } from './h2-streams.js';

/** An h2c server answering every stream through `Response` with `handler`. */
function h2Server(
  Response: typeof GatewayH2Response,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): ReturnType<typeof createH2Server> {
  const server = createH2Server();
  serveStreams(server, handler, Response);
  return server;
}

/** A real server with the gateway's response class, answering with `write`. */
async function serve(write: (res: ServerResponse) => void): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer({ ServerResponse: GatewayResponse }, (_req: IncomingMessage, res: ServerResponse) => {
    stampRequestId(res, 'req-1');
    write(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('GatewayResponse', () => {
  const SHARED = Object.freeze({ 'content-type': 'text/plain' });
  const writers: [string, (res: ServerResponse) => void][] = [
    ['a headers object without the id (shared, frozen: never modified)', (res) => res.writeHead(201, SHARED).end('x')],
    ['a status message and headers', (res) => res.writeHead(201, 'Made', { 'content-type': 'text/plain' }).end('x')],
    ['a flat header array', (res) => res.writeHead(201, ['content-type', 'text/plain']).end('x')],
    ['no writeHead at all (implicit head on end)', (res) => ((res.statusCode = 201), res.end('x'))],
  ];
  for (const [name, write] of writers) {
    it(`adds X-Request-ID to ${name}`, async () => {
      const s = await serve(write);
      try {
        const r = await fetch(s.url);
        assert.equal(r.status, 201);
        assert.equal(r.headers.get('x-request-id'), 'req-1');
        assert.equal(await r.text(), 'x');
      } finally {
        await s.close();
      }
    });
  }

  it('keeps the id a writer put in its headers object, once', async () => {
    const s = await serve((res) => res.writeHead(200, { 'x-request-id': 'req-1', 'content-length': 1 }).end('x'));
    try {
      const r = await fetch(s.url);
      assert.equal(r.headers.get('x-request-id'), 'req-1', 'one value, not "req-1, req-1"');
    } finally {
      await s.close();
    }
  });

  it('keeps the id a writer put in its flat header array, with no setHeader (Node then takes its fast path)', async () => {
    const calls: string[] = [];
    const s = await serve((res) => {
      const setHeader = res.setHeader.bind(res);
      res.setHeader = (name, value) => (calls.push(name), setHeader(name, value));
      res.writeHead(200, ['content-length', '1', 'x-request-id', 'req-1', 'age', '0']).end('x');
    });
    try {
      const r = await fetch(s.url);
      assert.equal(r.headers.get('x-request-id'), 'req-1');
      assert.equal(r.headers.get('age'), '0');
      assert.deepEqual(calls, []);
    } finally {
      await s.close();
    }
  });
});

describe('GatewayH2Response', () => {
  /** One h2c request to a server with the gateway's response class, answering with `write`. */
  async function h2Head(write: (res: ServerResponse) => void): Promise<Record<string, unknown>> {
    const server = h2Server(GatewayH2Response, (_req, res) => {
      stampRequestId(res, 'req-2');
      write(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      const stream = client.request({ ':path': '/' });
      stream.resume();
      const [head] = await Promise.all([
        new Promise<Record<string, unknown>>((resolve) => stream.once('response', (h) => resolve(h))),
        new Promise((resolve) => stream.once('end', resolve)),
      ]);
      return head;
    } finally {
      client.close();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it('adds X-Request-ID to a flat header array without one', async () => {
    const head = await h2Head((res) => res.writeHead(200, ['content-length', '1']).end('x'));
    assert.equal(head['x-request-id'], 'req-2');
  });

  it('drops the fields HTTP/2 forbids from a flat header array, and keeps its id once', async () => {
    const head = await h2Head((res) =>
      res.writeHead(200, ['connection', 'close', 'x-request-id', 'req-2', 'upgrade', 'h2c', 'age', '1']).end(),
    );
    assert.equal(head[':status'], 200);
    assert.equal(head['x-request-id'], 'req-2');
    assert.equal(head.age, '1');
    assert.equal(head.connection, undefined);
    assert.equal(head.upgrade, undefined);
  });
});

/** A real h2c server with the gateway's HTTP/2 response class, and one request's outcome. */
async function h2Outcome(
  write: (res: ServerResponse) => void,
): Promise<{ status?: number; code?: string; body: string; reset?: number }> {
  const server = h2Server(loggedH2Response(createLogger({ level: 'silent' })), (_req, res) => {
    stampRequestId(res, 'req-2');
    write(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const session = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  try {
    const stream = session.request({ ':path': '/' });
    let body = '';
    let head: Record<string, unknown> = {};
    stream.setEncoding('utf8');
    stream.on('response', (h) => (head = h));
    stream.on('data', (c: string) => (body += c));
    // A reset stream also emits 'error' (which `once` would reject with): its code is what counts.
    stream.on('error', () => {});
    await new Promise((resolve) => stream.once('close', resolve));
    return {
      status: head[':status'] as number | undefined,
      code: head['x-portico-error'] as string | undefined,
      body,
      reset: stream.rstCode,
    };
  } finally {
    session.close();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('GatewayH2Response: a head node:http2 refuses', () => {
  it('answers 502 GW_UPSTREAM_BAD_RESPONSE and drops the writer’s body writes', async () => {
    const r = await h2Outcome((res) => {
      res.writeHead(200, { 'http2-settings': 'AAMAAABkAARAAAAAAAIAAAAA', 'content-type': 'text/plain' });
      res.write('never sent');
      res.destroy();
      res.end();
    });
    assert.equal(r.status, 502);
    assert.equal(r.code, 'GW_UPSTREAM_BAD_RESPONSE');
    assert.deepEqual(JSON.parse(r.body), { error: 'Backend answer could not be relayed', success: false });
    assert.equal(r.reset, constants.NGHTTP2_NO_ERROR);
  });

  it('resets the stream when a head already went out', async () => {
    const r = await h2Outcome((res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
      res.writeHead(200, { 'content-type': 'text/plain' });
    });
    assert.equal(r.status, 200);
    assert.equal(r.reset, constants.NGHTTP2_INTERNAL_ERROR);
  });
});

describe('GatewayH2Response: the head sent with stream.respond', () => {
  /** One h2c request; `write` answers it; the head, body, trailers, and whether Node asked for trailers. */
  async function h2Exchange(
    write: (res: ServerResponse) => void,
    requestHeaders: Record<string, string> = {},
  ): Promise<{
    head: Record<string, unknown>;
    body: string;
    trailers?: Record<string, unknown>;
    asked: boolean;
    statusAfter: number;
  }> {
    let asked = false;
    let statusAfter = 0;
    const server = h2Server(GatewayH2Response, (_req, res) => {
      stampRequestId(res, 'req-3');
      (res as unknown as GatewayH2Response).stream.on('wantTrailers', () => (asked = true));
      write(res);
      statusAfter = res.statusCode;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      const stream = client.request({ ':path': '/', ...requestHeaders });
      let body = '';
      let trailers: Record<string, unknown> | undefined;
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => (body += c));
      stream.on('trailers', (t) => (trailers = t));
      const [head] = await Promise.all([
        new Promise<Record<string, unknown>>((resolve) => stream.once('response', (h) => resolve(h))),
        new Promise((resolve) => stream.once('close', resolve)),
      ]);
      return { head, body, trailers, asked, statusAfter };
    } finally {
      client.close();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it('asks for no trailers when the answer has none (no empty DATA frame after the body)', async () => {
    const r = await h2Exchange((res) => res.writeHead(200, Object.freeze({ 'content-type': 'text/plain' })).end('x'));
    assert.equal(r.head[':status'], 200);
    assert.equal(r.head['content-type'], 'text/plain');
    assert.equal(r.head['x-request-id'], 'req-3');
    assert.equal(r.body, 'x');
    assert.equal(r.asked, false);
  });

  it('merges setHeader fields under the writer’s, and reports the status it sent', async () => {
    const r = await h2Exchange((res) => {
      res.setHeader('x-a', '1');
      res.setHeader('Content-Type', 'text/html');
      res.writeHead(202, { 'Content-Type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] }).end('y');
    });
    assert.equal(r.head[':status'], 202);
    assert.equal(r.head['x-a'], '1');
    assert.equal(r.head['content-type'], 'text/plain');
    assert.deepEqual(r.head['set-cookie'], ['a=1', 'b=2']);
    assert.equal(r.statusAfter, 202);
    assert.equal(r.asked, false);
  });

  it('writes the implicit head of end() with the status and fields set before', async () => {
    const r = await h2Exchange((res) => {
      res.statusCode = 201;
      res.setHeader('x-b', '2');
      res.end('z');
    });
    assert.equal(r.head[':status'], 201);
    assert.equal(r.head['x-b'], '2');
    assert.equal(r.head['x-request-id'], 'req-3');
    assert.equal(r.body, 'z');
  });

  it('sends the trailers a gRPC answer adds after its head', async () => {
    const r = await h2Exchange((res) => {
      res.writeHead(200, { 'content-type': 'application/grpc' });
      res.write('\0\0\0\0\0');
      res.addTrailers({ 'grpc-status': '0' });
      res.end();
    });
    assert.equal(r.head['content-type'], 'application/grpc');
    assert.equal(r.trailers?.['grpc-status'], '0');
  });

  it('sends the trailers added to any answer of a gRPC call (a status after a non-gRPC head)', async () => {
    const r = await h2Exchange(
      (res) => {
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.write('down');
        res.addTrailers({ 'grpc-status': '14' });
        res.end();
      },
      { 'content-type': 'application/grpc', ':method': 'POST' },
    );
    assert.equal(r.head[':status'], 503);
    assert.equal(r.trailers?.['grpc-status'], '14');
    assert.equal(r.asked, true);
  });
});
