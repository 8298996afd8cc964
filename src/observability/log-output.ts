/**
 * Where log chunks go (line-batch.ts hands them over). Both outputs write without ever blocking
 * the event loop and say how many bytes they still hold, so the batch can drop instead of queue
 * when the sink cannot keep up:
 * - a pipe or socket (a container runtime's log collector, journald, `| tee`): the process's own
 *   stdout stream, which Node keeps non-blocking there; each chunk is one write system call on
 *   the event loop, with no thread hop; what the kernel does not take yet waits in the stream;
 * - anything else (a file, a terminal): asynchronous writes from libuv's thread pool
 *   (sonic-boom), one in flight at a time, so a slow disk holds a pool thread, never the loop.
 * After a write error (the reader went away) the output counts as full: lines are dropped and
 * counted, never thrown at the request that logged them.
 */
import { fstatSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { LineBatch, type BatchOutput } from './line-batch.js';

const EMPTY = Buffer.alloc(0);

let stdout: BatchOutput | undefined;

/**
 * The output for fd 1: the stdout stream when it is a pipe or socket, else asynchronous fd
 * writes. One per process, shared by every logger in it, so they share one bound.
 */
export function stdoutOutput(): BatchOutput {
  stdout ??= openStdout();
  return stdout;
}

function openStdout(): BatchOutput {
  let isStream = false;
  try {
    const st = fstatSync(1);
    isStream = st.isFIFO() || st.isSocket();
  } catch {
    // fd 1 closed: the fd output reports the error and counts every line as dropped
  }
  return isStream ? streamOutput(process.stdout) : fdOutput(1);
}

/** A non-blocking stream (net.Socket): bytes held are its `writableLength`. */
export function streamOutput(stream: Writable): BatchOutput {
  let failed = false;
  stream.on('error', () => {
    failed = true;
  });
  const broken = () => failed || stream.destroyed || !stream.writable;
  return {
    write(chunk) {
      if (!broken()) stream.write(chunk);
    },
    pendingBytes: () => (broken() ? Number.POSITIVE_INFINITY : stream.writableLength),
    flush(cb) {
      if (broken() || stream.writableLength === 0) return cb();
      // Write callbacks run in order: an empty write's runs once everything before it is out.
      stream.write(EMPTY, () => cb());
    },
  };
}

/** Asynchronous writes to a file descriptor (sonic-boom in buffer mode), one in flight at a time. */
export function fdOutput(fd: number): BatchOutput {
  const sonic = pino.destination({ dest: fd, sync: false, contentMode: 'buffer', maxWrite: 65_536 });
  // sonic-boom's buffer mode takes Buffers; its type declares strings only.
  const write = sonic.write.bind(sonic) as unknown as (chunk: Buffer) => boolean;
  let pending = 0;
  let failed = false;
  let waiting: (() => void)[] = [];
  const settle = () => {
    const callbacks = waiting;
    waiting = [];
    for (const cb of callbacks) cb();
  };
  sonic.on('write', (n: number) => {
    pending -= n;
    if (pending <= 0) settle();
  });
  sonic.on('error', () => {
    failed = true;
    settle();
  });
  return {
    write(chunk) {
      if (failed) return;
      pending += chunk.length;
      write(chunk);
    },
    pendingBytes: () => (failed ? Number.POSITIVE_INFINITY : pending),
    flush(cb) {
      if (failed || pending <= 0) return cb();
      waiting.push(() => cb());
    },
    flushSync() {
      try {
        sonic.flushSync();
        pending = 0;
      } catch {
        // a write is in flight or the fd is gone: nothing more can be done synchronously
      }
    },
  };
}

/** The batch the gateway logs to: stdout, bounded, dropping and counting when stdout falls behind. */
export function stdoutBatch(): LineBatch {
  return new LineBatch(stdoutOutput());
}

/** Lines the logger's output dropped because it could not keep up; 0 for other destinations. */
export function droppedLogLines(logger: Logger): number {
  const streamSym = (pino.symbols as unknown as { streamSym: symbol }).streamSym;
  const stream = (logger as unknown as Record<symbol, unknown>)[streamSym];
  return stream instanceof LineBatch ? stream.droppedLines : 0;
}
