/**
 * Shutdown with open SSE streams: the drain does not wait for them (it would take the whole 15 s);
 * each stream is ended cleanly for the client and its backend stream is closed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { startBackend } from '../support/backend.js';
import { waitFor } from '../support/wait-for.js';
import { loadConfigText } from '../../src/config/load.js';
import { createGateway } from '../../src/gateway.js';
import { createLogger } from '../../src/observability/logger.js';

/** Rejects when `p` has not settled within `ms`. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms))),
  ]);
}

describe('gateway shutdown with open SSE streams', () => {
  it('ends every open stream cleanly at once and closes in well under the 15 s drain', async () => {
    let backendClosed = 0;
    const backend = await startBackend((_req, res) => {
      res.on('close', () => backendClosed++);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
    });
    const loaded = loadConfigText(
      `
routes:
  - method: GET
    route: /events
    service: ${backend.host}
    path: /events
    isSSE: true
`,
      'test.yaml',
      {},
    );
    if (!loaded.ok) throw new Error('config');
    // The production drain period (15 s): the streams must not wait for it.
    const gateway = createGateway({ config: loaded.config, logger: createLogger({ level: 'silent' }) });
    const { port } = await gateway.listen(0, '127.0.0.1');
    let closing: Promise<void> | undefined;
    try {
      const open = (): Promise<{ res: IncomingMessage; text: () => string; ended: Promise<'end' | 'aborted'> }> =>
        new Promise((resolve, reject) => {
          const req = httpRequest({ host: '127.0.0.1', port, path: '/api/events', agent: false }, (res) => {
            let text = '';
            res.setEncoding('utf8');
            const ended = new Promise<'end' | 'aborted'>((r) => {
              res.on('end', () => r('end'));
              res.on('aborted', () => r('aborted'));
              res.on('error', () => r('aborted'));
            });
            const first = new Promise<void>((r) => res.on('data', (c: string) => ((text += c), r())));
            void first.then(() => resolve({ res, text: () => text, ended }));
          });
          req.on('error', reject);
          req.end();
        });
      const streams = await Promise.all([open(), open()]);
      assert.equal(streams[0]!.res.statusCode, 200);

      const started = performance.now();
      closing = gateway.close();
      const outcomes = await within(Promise.all(streams.map((s) => s.ended)), 2_000, 'client streams end');
      assert.deepEqual(outcomes, ['end', 'end'], 'a clean end, not a reset');
      for (const s of streams) assert.equal(s.text(), 'data: first\n\n');
      await within(closing, 2_000, 'gateway.close()');
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 2_000, `close took ${Math.round(elapsed)} ms`);
      // The backend streams were aborted (bounded wait for the backend to see the close).
      await waitFor(() => backendClosed >= 2, 5_000, 'both backend streams closed');
      assert.equal(backendClosed, 2);
    } finally {
      await (closing ?? gateway.close());
      await backend.close();
    }
  });
});
