/**
 * The compression benches' backend: nginx serving the composition bench's 20 KB JSON answer
 * (80 user records, bench/backend.ts `/records`) as a static file at `/records`, so the backend
 * costs the proxies in front of it as little as it can.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { handle } from '../backend.js';
import { findNginx } from './nginx.js';
import { freePort, startProcess, type Started } from './processes.js';

/** bench/backend.ts's `/records`, asked of its handler in this process. */
export async function recordsBody(): Promise<Buffer> {
  const server = createServer(handle);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  try {
    const { port } = server.address() as AddressInfo;
    return Buffer.from(await (await fetch(`http://127.0.0.1:${port}/records`)).arrayBuffer());
  } finally {
    server.close();
  }
}

/** Starts nginx serving `body` at `/records` from `dir` (which it writes into), on `port` of the result. */
export async function startRecordsNginx(dir: string, body: Buffer, core: number | undefined): Promise<Started> {
  const nginx = findNginx();
  if (nginx === undefined) throw new Error('nginx is needed as the backend (apt-get install -y nginx)');
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'records.json'), body);
  const port = await freePort();
  writeFileSync(
    join(dir, 'nginx.conf'),
    `worker_processes 1;
pid ${join(dir, 'nginx.pid')};
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:${port};
    location = /records { default_type application/json; alias ${join(dir, 'records.json')}; }
  }
}
`,
  );
  return startProcess({
    name: 'nginx',
    command: nginx,
    args: ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'],
    core,
    ready: { kind: 'health', port, path: '/records' },
    stdout: 'ignore',
  });
}
