import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayResponse, stampRequestId } from './gateway-response.js';

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
});
