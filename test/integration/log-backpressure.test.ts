/**
 * The access log against a sink that never keeps up: `portico start` with stdout to a pipe
 * nobody reads. Every request still answers at once, lines past the output's bound are dropped
 * and counted (`portico_log_lines_dropped_total`), the memory they would take stays bounded,
 * and a stop is not held by the full pipe.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { closedPort, json, startBackend, type TestBackend } from '../support/backend.js';

const cli = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** The value of one unlabelled sample of the exposition text. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The bound on what the log output holds unwritten (line-batch.ts `maxPendingBytes`). */
const MAX_PENDING = 4 * 1024 * 1024;
/** Each access line carries the path (not the query): four 2,000-character parameters make it 8 KB. */
const SEGMENT = 'p'.repeat(2_000);
const PATH = `/api/fill/${SEGMENT}/${SEGMENT}/${SEGMENT}/${SEGMENT}`;
/** Lines worth three times the bound: a queue that grew with them could not hide. */
const REQUESTS = Math.ceil((3 * MAX_PENDING) / PATH.length);
/**
 * A write that blocked on the full pipe would hold the event loop for good, so any finite limit
 * catches it; this one is far above a local round trip and far below the test's own timeout.
 */
const ANSWER_WITHIN_MS = 2_000;

describe('access log to a pipe nobody reads', () => {
  let backend: TestBackend;
  let child: ChildProcess;
  let exited: Promise<number | string>;
  let url: string;
  let dir: string;

  before(async () => {
    backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    dir = mkdtempSync(join(tmpdir(), 'portico-logpipe-'));
    const config = join(dir, 'gateway.yaml');
    writeFileSync(
      config,
      `routes:\n  - method: GET\n    route: "/fill/{a}/{b}/{c}/{d}"\n    service: ${backend.host}\n    path: "/fill/{a}/{b}/{c}/{d}"\n    public: true\n`,
    );
    const port = await closedPort();
    url = `http://127.0.0.1:${port}`;
    // stdout is a pipe this test never reads: once the kernel's and Node's buffers are full,
    // nothing the gateway logs can leave the process.
    child = spawn(
      process.execPath,
      ['--import', 'tsx', cli, 'start', '--config', config, '--host', '127.0.0.1', '--port', String(port)],
      {
        env: { ...process.env, PORTICO_LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
    // The "listening" line is on the unread stdout: wait for /health instead.
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        const res = await request(`${url}/health`);
        await res.body.dump();
        if (res.statusCode === 200) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`gateway not healthy within 20 s; stderr: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const metrics = async () => {
    const res = await request(`${url}/metrics`, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
    return res.body.text();
  };

  it('answers every request at once, drops and counts the lines, holds bounded memory, and still stops', async () => {
    const before = await metrics();
    assert.equal(sample(before, 'portico_log_lines_dropped_total'), 0, 'nothing dropped before the pipe is full');
    const externalBefore = sample(before, 'nodejs_external_memory_bytes')!;

    let slowest = 0;
    let next = 0;
    const statuses = new Map<number, number>();
    const worker = async () => {
      while (next < REQUESTS) {
        next++;
        const started = performance.now();
        const res = await request(`${url}${PATH}`, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
        await res.body.dump();
        slowest = Math.max(slowest, performance.now() - started);
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    assert.deepEqual([...statuses], [[200, REQUESTS]]);
    assert.ok(slowest < ANSWER_WITHIN_MS, `slowest answer ${slowest.toFixed(0)} ms`);

    const text = await metrics();
    const dropped = sample(text, 'portico_log_lines_dropped_total')!;
    assert.ok(dropped > 0, `portico_log_lines_dropped_total is ${dropped}`);
    assert.ok(dropped < REQUESTS, 'the lines that fit before the pipe filled were written, not dropped');
    // Off-heap memory (where the unwritten chunks live) grew by at most the bound plus one batch
    // and some slack, though three times the bound was logged.
    const grown = sample(text, 'nodejs_external_memory_bytes')! - externalBefore;
    assert.ok(grown < MAX_PENDING + 3 * 1024 * 1024, `external memory grew by ${(grown / 1048576).toFixed(1)} MiB`);

    // The full pipe must not hold the stop either: the final flush gives up after its bound.
    const stopStarted = performance.now();
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.ok(performance.now() - stopStarted < 5_000, 'stopped within the flush bound plus the drain');
  });
});
