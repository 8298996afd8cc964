import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, constants, createServer, type ClientHttp2Session, type OutgoingHttpHeaders } from 'node:http2';
import { GatewayH2Response } from './h2-response.js';
import { serveStreams } from './h2-streams.js';

/** An h2c server serving its streams with `handler`, and a client session to it. */
async function h2(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ client: ClientHttp2Session; close: () => Promise<void> }> {
  const server = createServer();
  serveStreams(server, handler, GatewayH2Response);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return {
    client,
    close: async () => {
      client.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** One request's head, informational heads and body. */
async function exchange(
  client: ClientHttp2Session,
  headers: OutgoingHttpHeaders,
  body?: string,
): Promise<{ head: Record<string, unknown>; informational: number[]; body: string }> {
  const stream = client.request(headers, { endStream: body === undefined });
  const informational: number[] = [];
  stream.on('headers', (h) => informational.push(h[':status'] as number));
  let text = '';
  stream.setEncoding('utf8');
  stream.on('data', (c: string) => (text += c));
  if (body !== undefined) stream.end(body);
  const [head] = await Promise.all([
    new Promise<Record<string, unknown>>((resolve) => stream.once('response', (h) => resolve(h))),
    new Promise((resolve) => stream.once('close', resolve)),
  ]);
  return { head, informational, body: text };
}

describe('serveStreams', () => {
  it('refuses CONNECT in the gateway’s error shape, without calling the handler', async () => {
    let called = false;
    const s = await h2(() => (called = true));
    try {
      const r = await exchange(s.client, { ':method': 'CONNECT', ':authority': 'example.com:443' });
      assert.equal(r.head[':status'], 405);
      assert.equal(r.head['x-portico-error'], 'GW_METHOD_UNSUPPORTED');
      assert.equal(typeof r.head['x-request-id'], 'string');
      assert.match(String(r.head.allow), /GET/);
      assert.equal(called, false);
    } finally {
      await s.close();
    }
  });

  it('answers 100 Continue before the handler reads the body, and 417 to another expectation', async () => {
    const s = await h2((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => res.end(body));
    });
    try {
      const go = await exchange(s.client, { ':method': 'POST', ':path': '/', expect: '100-continue' }, 'payload');
      assert.deepEqual(go.informational, [100]);
      assert.equal(go.head[':status'], 200);
      assert.equal(go.body, 'payload');
      const no = await exchange(s.client, { ':method': 'GET', ':path': '/', expect: 'something-else' });
      assert.equal(no.head[':status'], 417);
    } finally {
      await s.close();
    }
  });

  it('gives the request the connection’s address, and a socket whose close is the stream’s', async () => {
    const seen: { address?: string; version?: string; closedWithStream?: boolean }[] = [];
    const s = await h2((req, res) => {
      const entry: (typeof seen)[number] = { address: req.socket.remoteAddress, version: req.httpVersion };
      seen.push(entry);
      req.socket.once('close', () => (entry.closedWithStream = true));
      res.end();
    });
    try {
      await exchange(s.client, { ':path': '/a' });
      await exchange(s.client, { ':path': '/b' });
      assert.equal(seen.length, 2);
      for (const e of seen) assert.deepEqual(e, { address: '127.0.0.1', version: '2.0', closedWithStream: true });
    } finally {
      await s.close();
    }
  });

  it('passes the stream’s drain on to a writer that waits for it', async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let drains = 0;
    const s = await h2((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      let left = 32;
      const pump = () => {
        while (left > 0) {
          left--;
          if (!res.write(chunk)) {
            drains++;
            return void res.once('drain', pump);
          }
        }
        res.end();
      };
      pump();
    });
    try {
      const r = await exchange(s.client, { ':path': '/' });
      assert.equal(r.body.length, 32 * chunk.length);
      assert.ok(drains > 0, 'the writer waited for a drain at least once');
    } finally {
      await s.close();
    }
  });

  it('tells the request it was aborted when the client resets the stream mid-body', async () => {
    let resolveAborted!: (v: { aborted: boolean; complete: boolean }) => void;
    const aborted = new Promise<{ aborted: boolean; complete: boolean }>((resolve) => (resolveAborted = resolve));
    const s = await h2((req, res) => {
      // The head tells the client its first bytes arrived: it resets the stream then.
      req.once('data', () => res.flushHeaders());
      req.once('aborted', () => resolveAborted({ aborted: req.aborted, complete: req.complete }));
    });
    try {
      const stream = s.client.request({ ':method': 'POST', ':path': '/' }, { endStream: false });
      stream.on('error', () => {});
      stream.write('part');
      stream.once('response', () => stream.close(constants.NGHTTP2_CANCEL));
      assert.deepEqual(await aborted, { aborted: true, complete: true });
    } finally {
      await s.close();
    }
  });
});
