/**
 * HTTP/2 through the real CLI (`portico start` as a child process, so that its memory is its
 * own): a 50 MB upload and a 50 MB download streamed over h2 with the gateway's resident memory
 * flat, and a certificate swap by SIGHUP while a long h2 download goes on over the old connection.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { createTestCa, type TestCa } from '../support/certs.js';
import { startPortico, type PorticoProcess } from '../support/cli-process.js';

const MB = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

/** Resident memory of a process, from /proc. */
function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.replace(/\D+/g, '')) * 1024;
}

/** Samples `pid`'s RSS every 20 ms until `work` settles; resolves with the work's result and the peak. */
async function peakRss<T>(pid: number, work: Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = rssOf(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 20);
  try {
    return { result: await work, peak: Math.max(peak, rssOf(pid)) };
  } finally {
    clearInterval(timer);
  }
}

/** Writes `bytes` to `stream` in 64 KB chunks, waiting whenever the stream asks to. */
async function writeBytes(stream: ClientHttp2Stream, bytes: number): Promise<void> {
  for (let sent = 0; sent < bytes; sent += CHUNK.length) if (!stream.write(CHUNK)) await once(stream, 'drain');
  stream.end();
}

/** POSTs `bytes` to /api/upload with no content-length; the backend answers the count it got. */
async function upload(session: ClientHttp2Session, bytes: number): Promise<{ status: number; bytes: number }> {
  const stream = session.request({ ':path': '/api/upload', ':method': 'POST' });
  await writeBytes(stream, bytes);
  const [headers] = (await once(stream, 'response')) as [Record<string, string>];
  let text = '';
  stream.setEncoding('utf8');
  stream.on('data', (c: string) => (text += c));
  await once(stream, 'end');
  return { status: Number(headers[':status']), bytes: (JSON.parse(text) as { bytes: number }).bytes };
}

/** Reads a stream to its end: status and the number of body bytes. */
async function countBody(stream: ClientHttp2Stream): Promise<{ status: number; bytes: number }> {
  const [headers] = (await once(stream, 'response')) as [Record<string, string>];
  let bytes = 0;
  stream.on('data', (c: Buffer) => (bytes += c.length));
  await once(stream, 'end');
  return { status: Number(headers[':status']), bytes };
}

const fingerprint = (session: ClientHttp2Session) => (session.socket as TLSSocket).getPeerCertificate().fingerprint256;

describe('HTTP/2 through the CLI', () => {
  let ca: TestCa;
  let backend: TestBackend;
  let portico: PorticoProcess;
  let configFile: string;
  let caPem: Buffer;
  /** Sends the rest of the download held by `/download/<MB>/held`. */
  let releaseHeld: () => void = () => {};

  before(async () => {
    ca = createTestCa();
    caPem = readFileSync(ca.caFile);
    const first = ca.issue('localhost', 'first');
    copyFileSync(first.certFile, join(ca.dir, 'gateway.crt'));
    copyFileSync(first.keyFile, join(ca.dir, 'gateway.key'));
    backend = await startBackend(
      (req, res) => {
        if (req.method === 'POST') {
          let bytes = 0;
          req.on('data', (c: Buffer) => (bytes += c.length));
          req.on('end', () => json(res, 200, { bytes }));
          return;
        }
        // GET /download/<MB>/<ms between chunks>, or /download/<MB>/held: one chunk, then the rest
        // once the test calls releaseHeld().
        const [, , mb, pause] = (req.url ?? '').split('/');
        let left = Number(mb) * MB;
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(left) });
        const next = (): void => {
          while (left > 0) {
            left -= CHUNK.length;
            const more = res.write(CHUNK);
            if (left <= 0) return void res.end();
            if (Number(pause) > 0) return void setTimeout(next, Number(pause));
            if (!more) return void res.once('drain', next);
          }
        };
        if (pause === 'held') {
          left -= CHUNK.length;
          res.write(CHUNK);
          releaseHeld = next;
          return;
        }
        next();
      },
      { bufferBody: false },
    );
    configFile = join(ca.dir, 'gateway.yaml');
    writeFileSync(
      configFile,
      `config:
  tls: { certFile: gateway.crt, keyFile: gateway.key }
  limits: { maxBodyBytes: ${100 * MB}, spillMaxBytesPerClient: ${100 * MB} }
routes:
  - { method: POST, route: /upload, service: ${backend.host}, path: /upload }
  - { method: GET, route: "/download/{mb}/{pause}", service: ${backend.host}, path: "/download/{mb}/{pause}" }
`,
    );
    portico = await startPortico(['--config', configFile], { PORTICO_LOG_LEVEL: 'info' });
  });
  after(async () => {
    portico?.child.kill('SIGTERM');
    await portico?.exited;
    await backend?.close();
    ca?.remove();
  });

  it('streams a 50 MB upload and a 50 MB download with flat memory', async () => {
    const session = connect(`https://localhost:${portico.port}`, { ca: caPem });
    try {
      // Warm up with 10 MB each way: code loaded, pools filled, the young generation grown to
      // its working size. What grows after that is what the bodies cost.
      await upload(session, 10 * MB);
      await countBody(session.request({ ':path': '/api/download/10/0' }));
      const before = rssOf(portico.child.pid!);

      const up = await peakRss(portico.child.pid!, upload(session, 50 * MB));
      assert.deepEqual(up.result, { status: 200, bytes: 50 * MB });
      const down = await peakRss(portico.child.pid!, countBody(session.request({ ':path': '/api/download/50/0' })));
      assert.deepEqual(down.result, { status: 200, bytes: 50 * MB });

      // A body held whole would add at least its 50 MB; what remains is garbage waiting for the
      // collector and allocator slack, which varies between runs by up to ~25 MB.
      const grew = Math.max(up.peak, down.peak) - before;
      assert.ok(grew < 40 * MB, `the gateway's RSS grew by ${(grew / MB).toFixed(1)} MB for 50 MB bodies`);
    } finally {
      session.close();
    }
  });

  it('SIGHUP swaps the certificate for new connections; a download on the old one goes on', async () => {
    const old = connect(`https://localhost:${portico.port}`, { ca: caPem });
    try {
      await countBody(old.request({ ':path': '/api/download/1/0' }));
      const oldPrint = fingerprint(old);
      // Held by the backend after its first chunk until the new certificate is in use, however
      // long the reload takes (its first one starts the worker that parses the file).
      const long = old.request({ ':path': '/api/download/8/held' });
      const download = countBody(long);
      await once(long, 'data');

      const second = ca.issue('localhost', 'second');
      copyFileSync(second.certFile, join(ca.dir, 'gateway.crt'));
      copyFileSync(second.keyFile, join(ca.dir, 'gateway.key'));
      const reloaded = portico.waitForLog((l) => l.msg === 'configuration reloaded');
      portico.child.kill('SIGHUP');
      await reloaded;

      const fresh = connect(`https://localhost:${portico.port}`, { ca: caPem });
      try {
        await countBody(fresh.request({ ':path': '/api/download/1/0' }));
        assert.equal(fingerprint(fresh), new X509Certificate(readFileSync(second.certFile)).fingerprint256);
      } finally {
        fresh.close();
      }
      assert.ok(!long.closed, 'the long download was still going when the new certificate was in use');
      releaseHeld();
      assert.deepEqual(await download, { status: 200, bytes: 8 * MB });
      assert.equal(fingerprint(old), oldPrint);
    } finally {
      old.close();
    }
  });
});
