/**
 * Key comparison time does not depend on how much of a real key the presented one matches
 * (docs/consumers.md "API keys"). The same measurement runs on two comparers: a naive one that
 * compares the raw key with `===` (the control: the measurement must see its leak, else it proves
 * nothing on this machine), and the key store, which must show none.
 *
 * Keys are long (64 KiB) so that a comparison that stops at the first differing character costs
 * visibly less than one that runs to the end; samples alternate between a near miss (differs in
 * the last character) and a total miss (differs in the first), so load on a busy machine falls on
 * both alike; medians of many samples, each a batch of calls, resist outliers.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createKeyStore } from './key-store.js';
import { compileConsumers } from '../config/consumers-file.js';

const KEY_CHARS = 64 * 1024;
const SAMPLES = 301;
const BATCH = 4;

/** A fresh copy of `text` (a flat string of its own, so no comparison can short-cut on identity or a cached hash). */
const fresh = (text: string) => Buffer.from(text, 'latin1').toString('latin1');

const key = randomBytes(KEY_CHARS / 2).toString('hex');
const nearMiss = fresh(key.slice(0, -1) + (key.endsWith('0') ? '1' : '0'));
const totalMiss = fresh((key.startsWith('0') ? '1' : '0') + key.slice(1));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Median nanoseconds per call for each of the two misses, sampled alternately. */
function measure(find: (candidate: string) => unknown): { near: number; total: number } {
  const near: number[] = [];
  const total: number[] = [];
  const time = (candidate: string) => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < BATCH; i++) find(candidate);
    return Number(process.hrtime.bigint() - start) / BATCH;
  };
  for (let i = 0; i < 20; i++) {
    find(nearMiss);
    find(totalMiss);
  }
  for (let i = 0; i < SAMPLES; i++) {
    // Alternate which goes first, so neither always follows the other into a warm cache.
    if (i % 2 === 0) {
      near.push(time(nearMiss));
      total.push(time(totalMiss));
    } else {
      total.push(time(totalMiss));
      near.push(time(nearMiss));
    }
  }
  return { near: median(near), total: median(total) };
}

describe('key comparison time does not depend on how much of the key matches', () => {
  it('the key store shows no leak that a raw === comparison of the same keys shows', () => {
    // The control: the measurement must see this comparer's leak, else it proves nothing here.
    const stored = [fresh(key)];
    const naive = measure((candidate) => stored.some((k) => k === candidate));
    const naiveLeak = naive.near - naive.total;
    assert.ok(naive.near > 3 * naive.total, `the control should leak: near ${naive.near} ns, total ${naive.total} ns`);

    const hash = `sha256:${createHash('sha256').update(key).digest('hex')}`;
    const store = createKeyStore(compileConsumers([{ id: 'acme', keys: [hash], claims: {}, plan: undefined }]));
    assert.equal(store.find(fresh(key))?.consumer.id, 'acme');
    // The store hashes 64 KiB per call, so compare differences, not ratios: a raw comparison
    // added after the hash would still leak the control's difference. A leak shows in every
    // measurement; a burst of load on a busy machine rarely spoils three in a row.
    const runs: string[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const m = measure((candidate) => store.find(candidate));
      if (Math.abs(m.near - m.total) < naiveLeak / 3) return;
      runs.push(`near ${m.near} ns, total ${m.total} ns`);
    }
    assert.fail(`the store leaks: ${runs.join('; ')}; the control's leak: ${naiveLeak} ns`);
  });
});
