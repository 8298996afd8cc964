import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// The open-loop client's framing of answers, against a real server: a length, chunks, a close
// after each answer, an error status, a request body.
describe('open-loop client', () => {
  let server: Server;
  let base = '';
  const bodies: string[] = [];
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (body !== '') bodies.push(body);
        if (req.url === '/chunked') {
          res.write('abc');
          res.end('defgh');
        } else if (req.url === '/close') {
          res.setHeader('connection', 'close');
          res.end('bye');
        } else if (req.url === '/missing') {
          res.statusCode = 404;
          res.end('no');
        } else res.end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  const client = fileURLToPath(new URL('./open-loop-client.ts', import.meta.url));
  const run = async (path: string, ...extra: string[]) => {
    const args = ['--import', 'tsx', client, '--url', `${base}${path}`, '--rate', '400', '--seconds', '0.25'];
    const { stdout } = await promisify(execFile)(process.execPath, [...args, '--connections', '4', ...extra]);
    return JSON.parse(/OPEN_LOOP_JSON (\{.*\})/.exec(stdout)![1]!) as {
      requests: number;
      errors: number;
      badStatus: number;
    };
  };

  it('reads answers framed by a length, by chunks, and by a close', async () => {
    for (const path of ['/length', '/chunked', '/close']) {
      const r = await run(path);
      assert.deepEqual([r.requests, r.errors, r.badStatus], [100, 0, 0], path);
    }
  });
  it('counts answers outside 2xx/3xx', async () => {
    const r = await run('/missing');
    assert.deepEqual([r.requests, r.errors, r.badStatus], [100, 0, 100]);
  });
  it('sends the body and headers given', async () => {
    bodies.length = 0;
    const r = await run(
      '/length',
      '--method',
      'POST',
      '--body-file',
      fileURLToPath(new URL('../package.json', import.meta.url)),
    );
    assert.equal(r.errors, 0);
    assert.equal(bodies.length, 100);
    assert.ok(bodies.every((b) => b.includes('"name"')));
  });
});
