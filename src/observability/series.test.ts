import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { createSeriesHistogram } from './series.js';

describe('series histogram', () => {
  it('keeps one series per triple of label values, labelled once, and shows each at scrape', async () => {
    const registry = new Registry();
    const h = createSeriesHistogram(registry, {
      name: 'test_duration_seconds',
      help: 'test',
      buckets: [0.1, 1],
      counter: { name: 'test_total', help: 'test' },
    });
    let made = 0;
    const of = (a: number, b: string, c: string) =>
      h.seriesOf(a, b, c, () => (made++, { class: String(a), method: b, route: c }));
    const first = of(2, 'GET', '/a');
    assert.equal(of(2, 'GET', '/a'), first);
    // Values that would join into one key string stay apart.
    assert.notEqual(of(2, 'GET', 'x /a'), of(2, 'GET x', '/a'));
    assert.notEqual(of(3, 'GET', '/a'), first);
    assert.equal(made, 4);
    h.observe(first, 0.05);
    h.observe(of(2, 'GET', '/a'), 0.5);
    const text = await registry.metrics();
    assert.match(text, /test_duration_seconds_bucket\{le="0.1",class="2",method="GET",route="\/a"\} 1\n/);
    assert.match(text, /test_duration_seconds_bucket\{le="1",class="2",method="GET",route="\/a"\} 2\n/);
    assert.match(text, /test_total\{class="2",method="GET",route="\/a"\} 2\n/);
    assert.match(text, /test_total\{class="3",method="GET",route="\/a"\} 0\n/);
  });
});
