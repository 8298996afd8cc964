/* global EventSource, fetch, location, setTimeout */
// The status page's script: one EventSource on /api/feed (docs/dashboard.md), and the DOM
// updated from each event. Text from the gateway is only ever set as textContent, never as HTML.
// scripts/gen-admin-page.ts joins it and the modules it imports into the one script the page loads.
import { drawCharts, SERIES_SECONDS } from './charts.js';
import { $ } from './elements.js';
import { applyFilter, render } from './status-view.js';

let points = [];

function setLive(state, text) {
  const live = $('live');
  if (live.dataset.state === state) return;
  live.dataset.state = state;
  live.textContent = text;
}

function connect() {
  const source = new EventSource('/api/feed');
  source.addEventListener('series', (e) => {
    points = JSON.parse(e.data).points;
    drawCharts(points);
  });
  source.addEventListener('status', (e) => {
    setLive('live', 'Live: updated every second');
    render(JSON.parse(e.data));
  });
  source.addEventListener('point', (e) => {
    const point = JSON.parse(e.data);
    if (points.length > 0 && point.t <= points.at(-1).t) return;
    points.push(point);
    if (points.length > SERIES_SECONDS) points.shift();
    drawCharts(points);
  });
  source.addEventListener('error', () => {
    setLive('lost', 'Connection lost: retrying');
    if (source.readyState !== EventSource.CLOSED) return;
    // Refused rather than cut (a new token, a signed-out session): the page shows the login form.
    const retry = () => setTimeout(connect, 2000);
    fetch('/api/status').then((r) => (r.status === 401 ? location.reload() : retry()), retry);
  });
}

$('filter').addEventListener('input', applyFilter);
$('filter').addEventListener('keydown', (e) => {
  if (e.key === 'Escape') {
    e.target.value = '';
    applyFilter();
  }
});
connect();
