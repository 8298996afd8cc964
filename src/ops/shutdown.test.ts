import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../observability/logger.js';
import { installShutdown } from './shutdown.js';

function logger(lines: string[]) {
  return createLogger({
    level: 'info',
    destination: new Writable({ write: (c: Buffer, _e, cb) => (lines.push(c.toString()), cb()) }),
  });
}

describe('graceful shutdown', () => {
  it('closes once and exits 0; a repeated request while draining changes nothing', async () => {
    const lines: string[] = [];
    let closes = 0;
    const exited = new Promise<number>((resolve) => {
      const stop = installShutdown(
        { close: async () => void closes++ },
        { logger: logger(lines), exit: resolve, signals: [] },
      );
      stop('test');
      stop('test again');
    });
    assert.equal(await exited, 0);
    assert.equal(closes, 1);
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { msg: string }).msg),
      ['draining: finishing in-flight requests', 'stopped'],
    );
  });

  it('exits 1 when closing fails', async () => {
    const code = await new Promise<number>((resolve) => {
      installShutdown(
        { close: () => Promise.reject(new Error('stuck')) },
        { logger: logger([]), exit: resolve, signals: [] },
      )('test');
    });
    assert.equal(code, 1);
  });
});
