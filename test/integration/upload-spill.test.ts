/**
 * Request bodies spilled to temporary files are capped in total and per client
 * (limits.spillMaxBytes, limits.spillMaxBytesPerClient): slow uploads holding large bodies cannot
 * fill the disk, and the bytes come back when the uploads end or abort.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readlinkSync } from 'node:fs';
import { connect } from 'node:http2';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { rawConnect, type RawConnection } from '../support/raw-http.js';
import { waitFor } from '../support/wait-for.js';
import { closeAll } from '../support/close-all.js';
import { gatewayForSuite } from '../support/suite-gateway.js';
import { h2request } from '../support/http2.js';

const BODY = 1_000_000;

/** Body files this process (the gateway runs in it) holds open: unlinked, so only its descriptors show them. */
function openBodyFiles(): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).includes('portico-body-')) count++;
    } catch {
      // The descriptor closed between the listing and the read.
    }
  }
  return count;
}

/** The value of one sample of the gateway's metrics, 0 when absent. */
async function sample(gw: TestGateway, series: string): Promise<number> {
  const text = await gw.gateway.metrics()!.render();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

/** A backend answering with the length of the body it received. */
const lengthBackend = () => startBackend((_req, res, body) => json(res, 200, { length: body.length }));

/** One buffered upload route on `backend`. */
const uploadRoute = (backend: TestBackend) => `routes:
  - { method: POST, route: /upload, service: ${backend.host}, path: /upload }
`;

/** Starts an upload of BODY bytes from `client` (X-Forwarded-For) and sends `sent` of them. */
async function startUpload(gw: TestGateway, client: string, sent: number): Promise<RawConnection> {
  const c = await rawConnect(gw.port);
  c.write(`POST /api/upload HTTP/1.1\r\nhost: x\r\nx-forwarded-for: ${client}\r\ncontent-length: ${BODY}\r\n\r\n`);
  if (sent > 0) c.write(Buffer.alloc(sent, 1));
  return c;
}

describe('spilled request bodies are capped in total and per client', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  const held: RawConnection[] = [];
  /** The suite's configuration, with `total` as limits.spillMaxBytes. */
  const config = (total: number) => `${uploadRoute(backend)}config:
  trustProxy: [127.0.0.1]
  limits: { requestBufferBytes: 65536, spillMaxBytes: ${total}, spillMaxBytesPerClient: ${2 * BODY} }
`;
  before(async () => {
    backend = await startBackend(
      (req, res) => {
        let length = 0;
        req.on('data', (c: Buffer) => (length += c.length));
        req.on('end', () => json(res, 200, { length }));
      },
      { bufferBody: false },
    );
    gw = await startGateway(config(3 * BODY));
  });
  after(async () => {
    for (const c of held.splice(0)) c.close();
    await closeAll(gw, backend);
  });

  const spilled = () => sample(gw, 'portico_body_spill_bytes');
  const refused = (limit: string) => sample(gw, `portico_body_spill_refused_total{route="/upload",limit="${limit}"}`);

  it('three slow uploads hold the total: the next client gets 503 at once, logged and counted; the bytes come back', async () => {
    for (const client of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) held.push(await startUpload(gw, client, 200_000));
    await waitFor(() => openBodyFiles() === 3, 5_000, 'three bodies spilled to files');

    const fourth = await startUpload(gw, '10.0.0.4', BODY);
    const res = await fourth.next();
    fourth.close();
    assert.equal(res.status, 503);
    assert.equal(res.headers['x-portico-error'], 'GW_BODY_SPILL_FULL');
    assert.equal(res.headers['retry-after'], '5');
    assert.equal(res.headers.connection, 'close');
    assert.equal(await spilled(), 3 * BODY);
    assert.equal(await refused('total'), 1);
    const line = gw.logs.find((l) => l.reqId === res.headers['x-request-id']);
    assert.deepEqual(
      {
        level: line?.level,
        client: line?.client,
        limit: line?.limit,
        bytes: line?.bytes,
        totalBytes: line?.totalBytes,
      },
      { level: 40, client: '10.0.0.4', limit: 'total', bytes: BODY, totalBytes: 3 * BODY },
    );
    assert.match(String(line?.msg), /limits\.spillMaxBytes/);

    // One upload ends, one aborts, one ends later: every byte and every file comes back.
    const [first, second, third] = held.splice(0) as [RawConnection, RawConnection, RawConnection];
    first.write(Buffer.alloc(BODY - 200_000, 1));
    assert.equal((await first.next()).status, 200);
    first.close();
    second.close();
    third.write(Buffer.alloc(BODY - 200_000, 1));
    assert.equal(JSON.parse((await third.next()).body).length, BODY);
    third.close();
    await waitFor(async () => (await spilled()) === 0, 5_000, 'the spilled bytes back to 0');
    await waitFor(() => openBodyFiles() === 0, 5_000, 'every body file closed');
  });

  it('one client past its own cap gets 429 while another client is still served', async () => {
    for (let i = 0; i < 2; i++) held.push(await startUpload(gw, '10.0.1.1', 100_000));
    await waitFor(() => openBodyFiles() === 2, 5_000, 'two bodies spilled to files');

    const third = await startUpload(gw, '10.0.1.1', 0);
    const res = await third.next();
    third.close();
    assert.equal(res.status, 429);
    assert.equal(res.headers['x-portico-error'], 'GW_BODY_SPILL_CLIENT_LIMIT');
    assert.equal(res.headers['retry-after'], '5');
    assert.equal(await refused('client'), 1);
    const line = gw.logs.find((l) => l.reqId === res.headers['x-request-id']);
    assert.deepEqual(
      { client: line?.client, limit: line?.limit, bytes: line?.bytes, clientBytes: line?.clientBytes },
      { client: '10.0.1.1', limit: 'client', bytes: BODY, clientBytes: 2 * BODY },
    );

    const other = await startUpload(gw, '10.0.1.2', BODY);
    assert.equal((await other.next()).status, 200);
    other.close();

    for (const c of held.splice(0)) c.close();
    await waitFor(async () => (await spilled()) === 0, 5_000, 'the aborted uploads release their bytes');
    await waitFor(() => openBodyFiles() === 0, 5_000, 'every body file closed');
  });

  it('a chunked body is counted as it spills: 429 once it passes the client cap, and nothing is left held', async () => {
    const seenBefore = backend.seen.length;
    const c = await rawConnect(gw.port);
    c.write(`POST /api/upload HTTP/1.1\r\nhost: x\r\nx-forwarded-for: 10.0.2.1\r\ntransfer-encoding: chunked\r\n\r\n`);
    const chunk = Buffer.alloc(100_000, 2);
    const answer = c.next();
    // One and a half times the cap, never ended: the refusal comes on the way.
    for (let sent = 0; sent < 3 * BODY; sent += chunk.length)
      c.write(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]));
    const res = await answer;
    c.close();
    assert.equal(res.status, 429);
    assert.equal(res.headers['x-portico-error'], 'GW_BODY_SPILL_CLIENT_LIMIT');
    await waitFor(async () => (await spilled()) === 0, 5_000, 'the refused body releases its bytes');
    await waitFor(() => openBodyFiles() === 0, 5_000, 'the refused body file closed');
    assert.equal(backend.seen.length, seenBefore, 'the refused body never reached the backend');
  });
  it('a reload keeps counting the bytes of uploads in flight, against the new caps', async () => {
    held.push(await startUpload(gw, '10.0.3.1', 100_000), await startUpload(gw, '10.0.3.2', 100_000));
    await waitFor(async () => (await spilled()) === 2 * BODY, 5_000, 'two bodies reserved');
    gw.reload(config(2.5 * BODY));

    const third = await startUpload(gw, '10.0.3.3', 0);
    const res = await third.next();
    third.close();
    assert.equal(res.status, 503, 'the held bytes survived the reload and the new total applies');
    for (const c of held.splice(0)) c.close();
    await waitFor(async () => (await spilled()) === 0, 5_000, 'the uploads on the old configuration release');
  });
});

describe('spilled request bodies over HTTP/2', () => {
  const s = gatewayForSuite(
    (b) => `${uploadRoute(b)}config:
  http2: { cleartext: true }
  limits: { requestBufferBytes: 65536, spillMaxBytesPerClient: ${1.5 * BODY} }
`,
    lengthBackend,
  );

  it('a held stream counts against its client: the next stream gets 429, the session goes on, the bytes come back', async () => {
    const session = connect(s.gw.url);
    try {
      const held = session.request({ ':method': 'POST', ':path': '/api/upload', 'content-length': String(BODY) });
      held.write(Buffer.alloc(200_000, 1));
      await waitFor(() => openBodyFiles() === 1, 5_000, 'the held body spilled to a file');

      const refused = await h2request(
        session,
        '/api/upload',
        { ':method': 'POST', 'content-length': String(BODY) },
        Buffer.alloc(BODY, 2),
      );
      assert.equal(refused.status, 429);
      assert.equal(refused.headers['x-portico-error'], 'GW_BODY_SPILL_CLIENT_LIMIT');
      assert.equal(await sample(s.gw, 'portico_body_spill_bytes'), BODY);

      held.close();
      await waitFor(
        async () => (await sample(s.gw, 'portico_body_spill_bytes')) === 0,
        5_000,
        'the reset stream releases',
      );
      await waitFor(() => openBodyFiles() === 0, 5_000, 'its file closed');
      const small = await h2request(session, '/api/upload', { ':method': 'POST' }, 'abc');
      assert.equal(small.status, 200);
    } finally {
      // Closed gracefully while the suite's gateway closes: the server side's socket may stay
      // half-open, which the drain cuts at its limit (setup/drain.ts) instead of waiting forever.
      session.close();
    }
  });
});

describe('the default limits', () => {
  const s = gatewayForSuite(uploadRoute, lengthBackend);

  const MiB = 1024 * 1024;

  it('refuses a declared body over 10 MiB with 413 before reading it', async () => {
    const c = await rawConnect(s.gw.port);
    c.write(`POST /api/upload HTTP/1.1\r\nhost: x\r\ncontent-length: ${10 * MiB + 1}\r\n\r\n`);
    const res = await c.next();
    c.close();
    assert.equal(res.status, 413);
    assert.equal(res.headers['x-portico-error'], 'GW_BODY_TOO_LARGE');
  });

  it('takes a 10 MiB body through a temporary file within the default spill caps', async () => {
    const c = await rawConnect(s.gw.port);
    c.write(`POST /api/upload HTTP/1.1\r\nhost: x\r\ncontent-length: ${10 * MiB}\r\n\r\n`);
    c.write(Buffer.alloc(10 * MiB, 3));
    const res = await c.next();
    c.close();
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(res.body).length, 10 * MiB);
  });
});
