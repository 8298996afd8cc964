/* global document, EventSource, performance, fetch, location, setTimeout */
// The status page's script: one EventSource on /api/feed (docs/dashboard.md), and the DOM
// updated from each event. Text from the gateway is only ever set as textContent, never as HTML.
'use strict';

const SERIES_SECONDS = 300;
const $ = (id) => document.getElementById(id);
let points = [];
let rendered = false;
const routeRows = new Map();
let routeKey = '';
let errorsKey = '';
let reloadsKey = '';

/** An element with attributes and children (strings become text). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === 'class') node.className = value;
    else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function ms(value) {
  if (value === null || value === undefined) return '–';
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : String(Math.round(value));
}

function duration(sec) {
  const d = Math.floor(sec / 86400);
  const h = Math.floor((sec % 86400) / 3600);
  const m = Math.floor((sec % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  return m > 0 ? `${m} min ${sec % 60} s` : `${sec} s`;
}

const clock = (iso) => new Date(iso).toLocaleTimeString();

function setLive(state, text) {
  const live = $('live');
  if (live.dataset.state === state) return;
  live.dataset.state = state;
  live.textContent = text;
}

function render(status) {
  const g = status.gateway;
  $('identity').textContent =
    `Portico ${g.version} · up ${duration(g.uptimeSec)} · pid ${g.pid}` +
    (g.worker === undefined ? '' : ` · worker ${g.worker}: this worker's share of the traffic`);
  renderTiles(status);
  renderBackends(status);
  renderRoutes(status.routes);
  renderErrors(status.errors);
  renderReloads(status);
  if (!rendered) {
    rendered = true;
    performance.mark('portico:first-data');
    document.body.dataset.ready = 'true';
  }
}

function renderTiles(status) {
  const t = status.traffic;
  const m = t.lastMinute;
  $('t-now').textContent = String(t.lastSecond);
  $('t-requests').textContent = String(m.requests);
  $('t-5xx').textContent = String(m.statuses['5xx']);
  $('t-latency').textContent = `${ms(m.p50Ms)} / ${ms(m.p99Ms)} ms`;
  $('t-limited').textContent = status.rateLimit.enabled ? String(status.rateLimit.rejectedLastMinute) : 'off';
  $('t-streams').textContent = `${status.streams.sse} SSE, ${status.streams.websocket} WS`;
  const c = status.mappingCache;
  $('t-cache').textContent = !c.enabled
    ? 'off'
    : c.hitRatio === null
      ? 'no lookup yet'
      : `${Math.round(c.hitRatio * 100)}% of ${c.hits + c.misses}`;
  $('t-inflight').textContent = String(status.gateway.inFlight);
}

const STATES = {
  closed: ['ok', 'Circuit closed'],
  'half-open': ['warn', 'Circuit half-open: probing'],
  open: ['bad', 'Circuit open: calls refused'],
};

function renderBackends(status) {
  $('circuit-note').textContent = status.circuitBreaker.enabled
    ? ''
    : 'The circuit breaker is off (config.circuitBreaker.enabled): every circuit stays closed.';
  const cards = status.backends.map((b) => {
    const [tone, label] = STATES[b.circuit.state] ?? ['warn', b.circuit.state];
    const card = el(
      'li',
      { class: 'card', 'data-origin': b.origin, 'data-state': b.circuit.state },
      el('h3', {}, b.origin),
      el(
        'p',
        {},
        el('span', { class: `badge ${tone}` }, label),
        b.circuit.consecutiveFailures > 0 ? ` ${b.circuit.consecutiveFailures} failures in a row` : '',
      ),
      el('p', {}, `Last minute: ${b.lastMinute.calls} calls, ${b.lastMinute.failures} failed`),
    );
    if (b.targets !== undefined) {
      const list = el('ul', { 'aria-label': `Targets of ${b.origin}` });
      for (const t of b.targets) {
        const state = t.ejected ? 'ejected' : t.healthy ? 'healthy' : 'unhealthy';
        list.append(el('li', { 'data-state': state }, `${t.target}: ${state}, ${t.inFlight} in flight`));
      }
      card.append(list);
    }
    card.append(el('p', { class: 'note' }, `Used by ${b.routes.join(', ') || 'no route'}`));
    return card;
  });
  $('backends').replaceChildren(...cards);
}

function renderRoutes(routes) {
  const key = routes.map((r) => r.id).join('\n');
  if (key !== routeKey) {
    routeKey = key;
    routeRows.clear();
    const rows = routes.map((r) => {
      const kind = r.stream ?? (r.mapping.length > 0 ? `${r.kind} (${r.mapping.join(', ')})` : r.kind);
      const cells = ['', '', '', '', '', ''].map(() => el('td', { class: 'num' }));
      const row = el(
        'tr',
        { 'data-route': r.id, 'data-search': `${r.methods} ${r.path} ${r.backend} ${r.auth} ${kind}`.toLowerCase() },
        el('td', {}, r.methods),
        el('td', { class: 'mono' }, r.path),
        el('td', { class: 'mono' }, r.backend),
        el('td', {}, r.auth),
        el('td', {}, kind),
        ...cells,
      );
      routeRows.set(r.id, cells);
      return row;
    });
    $('route-rows').replaceChildren(...rows);
    applyFilter();
  }
  for (const r of routes) {
    const cells = routeRows.get(r.id);
    const m = r.lastMinute;
    const values = [m.perSec, m.statuses['2xx'], m.statuses['4xx'], m.statuses['5xx'], ms(m.p50Ms), ms(m.p99Ms)];
    values.forEach((v, i) => (cells[i].textContent = String(v)));
    cells[3].classList.toggle('bad', m.statuses['5xx'] > 0);
  }
}

function applyFilter() {
  const words = $('filter').value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  const rows = $('route-rows').children;
  for (const row of rows) {
    const match = words.every((w) => row.dataset.search.includes(w));
    row.hidden = !match;
    if (match) shown++;
  }
  $('route-count').textContent =
    words.length === 0 ? `${rows.length} routes` : `${shown} of ${rows.length} routes match`;
}

function renderErrors(errors) {
  const key = errors.length === 0 ? '' : `${errors.length} ${errors[0].time} ${errors[0].requestId}`;
  if (key === errorsKey) return;
  errorsKey = key;
  $('errors-empty').hidden = errors.length > 0;
  $('error-rows').replaceChildren(
    ...errors.map((e) =>
      el(
        'tr',
        {},
        el('td', {}, clock(e.time)),
        el('td', { class: e.status >= 500 ? 'bad' : '' }, String(e.status)),
        el('td', { class: 'mono' }, e.code),
        el('td', { class: 'mono' }, `${e.method} ${e.path}`),
        el('td', { class: 'mono' }, e.requestId),
        el('td', {}, e.detail ?? ''),
      ),
    ),
  );
}

function renderReloads(status) {
  $('config-file').textContent = status.gateway.configFile;
  const history = status.reloads.history;
  const key = history.map((r) => r.time + r.ok).join();
  if (key === reloadsKey) return;
  reloadsKey = key;
  $('reloads-empty').hidden = history.length > 0;
  $('reloads').replaceChildren(
    ...history.map((r) => {
      const item = el(
        'li',
        { 'data-ok': String(r.ok) },
        `${clock(r.time)}: `,
        el('span', { class: `badge ${r.ok ? 'ok' : 'bad'}` }, r.ok ? 'applied' : 'rejected'),
        ` ${r.file}`,
      );
      if (!r.ok && r.problems !== undefined) item.append(el('pre', {}, r.problems.join('\n')));
      return item;
    }),
  );
}

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

function drawCharts() {
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

function connect() {
  const source = new EventSource('/api/feed');
  source.addEventListener('series', (e) => {
    points = JSON.parse(e.data).points;
    drawCharts();
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
    drawCharts();
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
