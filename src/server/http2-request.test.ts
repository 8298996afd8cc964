import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { connect, createServer, type OutgoingHttpHeaders } from 'node:http2';
import { GatewayH2Request } from './http2-request.js';
import { GatewayH2Response } from './h2-response.js';
import { serveStreams } from './h2-streams.js';
import { hostRefusal } from './protocol-checks.js';

/** What the gateway reads of one h2c request sent with `headers`: the fields to forward, and the Host check. */
async function seen(headers: OutgoingHttpHeaders): Promise<{ raw: string[]; conflict: boolean; refusal?: string }> {
  let result: { raw: string[]; conflict: boolean; refusal?: string } | undefined;
  const server = createServer();
  serveStreams(
    server,
    (req, res) => {
      const gw = req as unknown as GatewayH2Request;
      result = { raw: gw.rawHeaders, conflict: gw.hostConflict, refusal: hostRefusal(req) };
      res.end();
    },
    GatewayH2Response,
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  try {
    const stream = client.request({ ':path': '/', ...headers });
    stream.resume();
    await new Promise((resolve) => stream.once('close', resolve));
  } finally {
    client.close();
    await new Promise((resolve) => server.close(resolve));
  }
  assert.ok(result, 'the request reached the server');
  return result;
}

describe('GatewayH2Request', () => {
  it('forwards host from :authority first, no pseudo-header, and split cookies as one field', async () => {
    const r = await seen({ ':authority': 'api.example', cookie: ['a=1', 'b=2'], 'x-one': '1' });
    assert.deepEqual(r.raw, ['host', 'api.example', 'x-one', '1', 'cookie', 'a=1; b=2']);
    assert.equal(r.conflict, false);
    assert.equal(r.refusal, undefined);
  });

  it('takes a host field that names :authority (case aside), forwarding it once', async () => {
    const r = await seen({ ':authority': 'api.example', host: 'API.example' });
    assert.deepEqual(r.raw, ['host', 'api.example']);
    assert.equal(r.refusal, undefined);
  });

  it('refuses a host field naming another host than :authority', async () => {
    const r = await seen({ ':authority': 'api.example', host: 'other.example' });
    assert.equal(r.conflict, true);
    assert.equal(r.refusal, 'GW_BAD_HOST');
  });

  it('refuses a malformed :authority that nghttp2 lets through', async () => {
    const r = await seen({ ':authority': 'api.example:8x' });
    assert.equal(r.conflict, false);
    assert.equal(r.refusal, 'GW_BAD_HOST');
  });
});
