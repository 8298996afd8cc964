import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MIN_HEADROOM, goals, headroom, summarise, type RoundSample } from './report.js';

const round = (n: number, rps: number): RoundSample => ({
  round: n,
  requests: rps,
  rps,
  p50Ms: 1,
  p99Ms: 2,
  errors: 0,
  badStatus: 0,
  peakRssMb: undefined,
  endRssMb: undefined,
});

describe('backend direct / floor', () => {
  it('is the median of the per-round ratios, flagged under the bound', () => {
    const floor = summarise('node-floor', 'floor', [round(1, 10_000), round(2, 10_000), round(3, 12_000)], []);
    const healthy = summarise('backend', 'backend', [round(1, 31_000), round(2, 29_000), round(3, 36_000)], []);
    const h = headroom([healthy, floor]);
    assert.equal(h.ratio, 3);
    assert.deepEqual(h.perRound, [3.1, 2.9, 3]);
    assert.equal(h.flagged, false);
    assert.doesNotMatch(h.line, /FLAGGED/);

    const squeezed = summarise('backend', 'backend', [round(1, 20_000), round(2, 21_000), round(3, 30_000)], []);
    const s = headroom([squeezed, floor]);
    assert.equal(s.ratio, 2.1);
    assert.ok(s.ratio! < MIN_HEADROOM);
    assert.equal(s.flagged, true);
    assert.match(s.line, /^backend direct \/ floor: 2\.10x .*FLAGGED: under 2\.5x/);
  });

  it('says "not measured" without the backend or floor row, and the goals carry it per scenario', () => {
    const floor = summarise('node-floor', 'floor', [round(1, 10_000)], []);
    assert.equal(headroom([floor]).ratio, undefined);
    assert.match(headroom([floor]).line, /not measured/);

    const rows = [
      summarise('backend', 'backend', [round(1, 20_000)], []),
      floor,
      summarise('portico', 'portico', [round(1, 9_500)], []),
    ];
    const checks = goals(new Map([['small', rows]]));
    const load = checks.find((c) => c.goal.startsWith('load side not the limit') && c.goal.includes('small GET'));
    assert.deepEqual(load, {
      goal: 'load side not the limit: backend direct >= 2.5x Node floor (small GET)',
      value: '2.00x',
      met: false,
    });
    assert.equal(checks.find((c) => c.goal === 'public route >= 0.90x Node floor req/s (small GET)')?.met, true);
  });
});
