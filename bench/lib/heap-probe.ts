/**
 * Preloaded (`node --expose-gc --import heap-probe.mjs ...`) into a Node process whose memory a
 * bench reads: on SIGUSR2 it runs a full collection and writes `process.memoryUsage()` as JSON
 * to the file named by PORTICO_BENCH_HEAP_FILE, so that the heap a process keeps (not the
 * garbage it has yet to collect) can be compared between processes that know nothing of the
 * bench. The signal is one no candidate uses (SIGUSR1 starts Node's inspector).
 * Self-contained: bench/lib/processes.ts `transpileEntry` makes it plain JS.
 */
import { renameSync, writeFileSync } from 'node:fs';

const file = process.env.PORTICO_BENCH_HEAP_FILE;
const gc = (globalThis as { gc?: () => void }).gc;

if (file !== undefined && file !== '') {
  process.on('SIGUSR2', () => {
    gc?.();
    // Written then renamed: the reader never sees half a file.
    writeFileSync(`${file}.tmp`, JSON.stringify({ ...process.memoryUsage(), collected: gc !== undefined }));
    renameSync(`${file}.tmp`, file);
  });
}
