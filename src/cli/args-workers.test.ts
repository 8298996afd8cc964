import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { parseCli, UsageError } from './args.js';

describe('portico start --workers', () => {
  it('defaults to one process', () => assert.equal(parseCli(['start'], {}).workers, 1));
  it('takes a number', () => assert.equal(parseCli(['start', '--workers', '4'], {}).workers, 4));
  it('takes auto: one per CPU', () =>
    assert.equal(parseCli(['start', '--workers', 'auto'], {}).workers, availableParallelism()));
  it('reads PORTICO_WORKERS', () => assert.equal(parseCli(['start'], { PORTICO_WORKERS: '3' }).workers, 3));
  for (const bad of ['0', '-1', '1.5', 'many', '2000']) {
    it(`refuses ${bad}`, () => assert.throws(() => parseCli(['start', '--workers', bad], {}), UsageError));
  }
});
