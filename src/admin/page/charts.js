/* global document */
// The two charts of the last five minutes, drawn as SVG paths from the series' points.
import { $ } from './elements.js';
import { ms } from './format.js';

/** Seconds the charts span: the series' length. */
export const SERIES_SECONDS = 300;

/** Draws lines into a 600 x 140 SVG; a null value breaks its line. */
function chart(svg, lines, unit) {
  const W = 600;
  const H = 140;
  const left = 44;
  const bottom = 18;
  let max = 0;
  for (const line of lines) for (const v of line.values) if (v !== null && v > max) max = v;
  const top = max > 0 ? niceCeiling(max) : 1;
  const x = (i) => left + (i * (W - left - 4)) / (SERIES_SECONDS - 1);
  const y = (v) => H - bottom - (v / top) * (H - bottom - 8);
  const parts = [];
  for (const f of [0, 0.5, 1]) {
    parts.push(svgEl('line', { class: 'grid', x1: left, x2: W, y1: y(top * f), y2: y(top * f) }));
    parts.push(svgEl('text', { x: left - 6, y: y(top * f) + 4, 'text-anchor': 'end' }, label(top * f)));
  }
  parts.push(svgEl('text', { x: left, y: H - 3 }, '5 min ago'));
  parts.push(svgEl('text', { x: W - 4, y: H - 3, 'text-anchor': 'end' }, 'now'));
  const offset = SERIES_SECONDS - lines[0].values.length;
  for (const line of lines) {
    let d = '';
    let drawing = false;
    line.values.forEach((v, i) => {
      if (v === null) return void (drawing = false);
      // A second alone between gaps is drawn as a dot (a zero-length segment with round caps).
      d += `${drawing ? 'L' : 'M'}${x(i + offset).toFixed(1)} ${y(v).toFixed(1)}${drawing ? '' : 'h0'}`;
      drawing = true;
    });
    if (d !== '') parts.push(svgEl('path', { class: line.class, d }));
  }
  svg.replaceChildren(...parts);
  svg.dataset.peak = String(max);
  svg.dataset.unit = unit;
}

/** An SVG element with attributes and, optionally, text. */
function svgEl(tag, attrs, text) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function niceCeiling(v) {
  const step = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * step >= v) return m * step;
  return 10 * step;
}

function label(v) {
  return v >= 1000
    ? `${(v / 1000).toFixed(v >= 10000 ? 0 : 1)}k`
    : v >= 10
      ? String(Math.round(v))
      : String(+v.toFixed(2));
}

export function drawCharts(points) {
  const last = points.at(-1);
  const rate = points.map((p) => p.requests);
  chart(
    $('chart-rate'),
    [
      { class: 'rate', values: rate },
      { class: 'errors', values: points.map((p) => p.errors) },
    ],
    'requests/s',
  );
  $('chart-rate').dataset.latest = String(last?.requests ?? 0);
  $('chart-rate').dataset.total = String(rate.reduce((sum, n) => sum + n, 0));
  $('note-rate').textContent =
    `Now ${last?.requests ?? 0} requests/s (${last?.errors ?? 0} 5xx); peak ${Math.max(0, ...rate)} over five minutes.`;
  chart(
    $('chart-latency'),
    [
      { class: 'p50', values: points.map((p) => p.p50Ms) },
      { class: 'p99', values: points.map((p) => p.p99Ms) },
    ],
    'ms',
  );
  $('note-latency').textContent =
    last === undefined || last.p50Ms === null
      ? 'No request in the last second.'
      : `Last second: p50 ${ms(last.p50Ms)} ms, p99 ${ms(last.p99Ms)} ms.`;
}
