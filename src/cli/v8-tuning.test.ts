import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { givenFlags, growthFactorFor, tuningFlags, tuningWanted } from './v8-tuning.js';

const ALL = ['--no-allocation-site-pretenuring', '--heap-growing-percent=30', '--no-wasm-loop-unrolling'];

describe('V8 tuning: flags', () => {
  it('reads flag names from node options and NODE_OPTIONS, with _ as -', () => {
    const given = givenFlags(
      ['--max-old-space-size=512', '--import', 'tsx'],
      '--heap_growing_percent=10  --no-wasm-loop-unrolling',
    );
    assert.deepEqual([...given].sort(), [
      '--heap-growing-percent',
      '--import',
      '--max-old-space-size',
      '--no-wasm-loop-unrolling',
      '--wasm-loop-unrolling',
    ]);
  });
  it('sets every flag when the operator set none', () => assert.deepEqual(tuningFlags(givenFlags([], undefined)), ALL));
  it('leaves heap growth alone when the operator sized the old generation', () =>
    assert.deepEqual(tuningFlags(givenFlags(['--max-old-space-size=2048'], undefined)), [ALL[0], ALL[2]]));
  it('leaves pretenuring alone when the operator chose it either way', () => {
    assert.deepEqual(tuningFlags(givenFlags([], '--allocation-site-pretenuring')), [ALL[1], ALL[2]]);
    assert.deepEqual(tuningFlags(givenFlags(['--no-allocation-site-pretenuring'], undefined)), [ALL[1], ALL[2]]);
  });
  it('is on unless PORTICO_V8_TUNING turns it off', () => {
    for (const on of [undefined, '', 'on', '1']) assert.equal(tuningWanted(on), true, String(on));
    for (const off of ['off', 'OFF', 'false', '0', 'no', ' off ']) assert.equal(tuningWanted(off), false, off);
  });
  it('leaves WebAssembly alone when the operator chose a tier', () =>
    assert.deepEqual(tuningFlags(givenFlags(['--liftoff-only'], undefined)), [ALL[0], ALL[1]]));
});

describe('V8 tuning: young generation cap', () => {
  const MB = 1024 * 1024;
  const V8_MAJOR = Number(process.versions.v8.split('.')[0]);
  it('grows below the cap and stops at it (sizes count both semi-spaces)', () => {
    assert.equal(growthFactorFor(8 * MB, 8), 2);
    assert.equal(growthFactorFor(16 * MB - 1, 8), 2);
    assert.equal(growthFactorFor(16 * MB, 8), 1);
    assert.equal(growthFactorFor(32 * MB, 8), 1);
  });

  // A real V8 heap: a child allocates objects that survive a few scavenges (as requests in flight
  // do) and reports the young generation's size, with and without a 2 MB semi-space cap.
  const tuning = fileURLToPath(new URL('./v8-tuning.ts', import.meta.url));
  /** A worker that registers a module loader, whose thread starts after the worker's `online`. */
  const LOADER_WORKER = `Promise.all([import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}), import('node:worker_threads')])
    .then(([tsx, threads]) => {
      tsx.register();
      threads.parentPort.postMessage('registered');
      setTimeout(() => {}, 60000);
    })`;
  const churn = (cap: boolean, burst = false, capMb = 2, worker?: 'plain' | 'loader') => `
    import { getHeapSpaceStatistics } from 'node:v8';
    import { once } from 'node:events';
    import { Worker } from 'node:worker_threads';
    import { capYoungGeneration } from ${JSON.stringify(tuning)};
    if (${cap}) capYoungGeneration(${capMb});
    const alive = [];
    const allocate = async () => {
      for (let i = 0; i < 4e6; i++) {
        alive.push({ i, list: [i] });
        if (alive.length > 20000) alive.length = 0;
        if (i % 5000 === 0) await new Promise((r) => setImmediate(r));
      }
    };
    // A reload: the gateway has served a while, then a worker thread (the config loader) starts.
    if (${worker !== undefined}) {
      await allocate();
      const loader = ${worker === 'loader'};
      const w = new Worker(loader ? ${JSON.stringify(LOADER_WORKER)} : 'setTimeout(() => {}, 60000)', { eval: true });
      await once(w, loader ? 'message' : 'online');
      w.unref();
    }
    // A start-up, or a reload's compile: a long synchronous stretch in which the GC observer
    // cannot run.
    if (${burst}) for (let i = 0; i < 1e6; i++) {
      alive.push({ i, list: [i] });
      if (alive.length > 20000) alive.length = 0;
    }
    await allocate();
    process.stdout.write(String(getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size));`;
  const youngBytes = async (cap: boolean, burst = false, capMb = 2, worker?: 'plain' | 'loader') => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      churn(cap, burst, capMb, worker),
    ]);
    return Number(stdout);
  };

  it('keeps the semi-spaces at the cap while V8 alone grows them past it', async () => {
    const [capped, free] = await Promise.all([youngBytes(true), youngBytes(false)]);
    if (V8_MAJOR < 13) {
      // 4 MB (two 2 MB semi-spaces), or one doubling past it: the observer runs on a turn after
      // the collection, and on a loaded machine one more growth may come first (8 MB seen once in CI).
      assert.ok(capped === 4 * MB || capped === 8 * MB, `with the cap the young generation grew to ${capped} bytes`);
    } else {
      // V8 13 (Node 24) still grows the young generation a 256 KB page at a time at growth
      // factor 1: the cap holds approximately (6-9.5 MB seen here for 4 MB, against 128 MB free).
      assert.ok(capped <= 12 * MB, `with the cap the young generation grew to ${capped} bytes`);
    }
    assert.ok(
      free >= 2 * capped && free > 4 * MB,
      `without the cap the young generation grew to ${free} bytes (${capped} with it)`,
    );
  });

  it('holds the cap through a synchronous start-up that allocates before the event loop turns', async () => {
    // V8 alone grows the young generation to 32 MB during such a start-up. A 2 MB cap, allowing one
    // doubling past it as above.
    const [capped, free] = await Promise.all([youngBytes(true, true, 2), youngBytes(false, true, 2)]);
    assert.ok(capped <= (V8_MAJOR < 13 ? 8 : 12) * MB, `with the cap the young generation grew to ${capped} bytes`);
    assert.ok(free >= 2 * capped, `without the cap the young generation grew to ${free} bytes (${capped} with it)`);
  });

  it('holds the cap after a worker thread starts, which resets the growth factor process-wide', async () => {
    // Without setting the factor again on the worker's `online`, capped grew like free (32 MB here).
    // A 2 MB cap, so that one doubling past it (the observer runs a turn after the collection; 32
    // MB seen once in CI for an 8 MB cap) stays well apart from V8's own growth.
    const [capped, free] = await Promise.all([youngBytes(true, true, 2, 'plain'), youngBytes(false, true, 2, 'plain')]);
    assert.ok(capped <= (V8_MAJOR < 13 ? 8 : 12) * MB, `with the cap the young generation grew to ${capped} bytes`);
    assert.ok(free >= 2 * capped, `without the cap the young generation grew to ${free} bytes (${capped} with it)`);
  });

  it('holds the cap while a worker runs a loader, whose thread starts after the worker is online', async () => {
    // Such a thread's heap resets the factor once more, after `online`: without setting it again
    // after each collection while a worker runs, capped grew like free (32 MB).
    const [capped, free] = await Promise.all([
      youngBytes(true, false, 2, 'loader'),
      youngBytes(false, false, 2, 'loader'),
    ]);
    assert.ok(capped <= (V8_MAJOR < 13 ? 8 : 12) * MB, `with the cap the young generation grew to ${capped} bytes`);
    assert.ok(free >= 2 * capped, `without the cap the young generation grew to ${free} bytes (${capped} with it)`);
  });
});
