/* global document, performance */
// The status document drawn into the page: tiles, backend cards, the routes table and its
// filter, the errors and the reload history. The table and the lists are rebuilt only when the
// routes, errors or reloads they show changed; in between, only their numbers are written.
import { $, el } from './elements.js';
import { formatDuration } from './format-duration.js';
import { bytes, clock, ms } from './format.js';

let rendered = false;
const routeRows = new Map();
// The line under a split or mirrored route's backend: its arms' or its copies' counts.
const routeTraffic = new Map();
let routeKey = '';
let errorsKey = '';
let reloadsKey = '';

/** Draws a status document (`status` events of the feed). */
export function render(status) {
  const g = status.gateway;
  $('identity').textContent =
    `Portico ${g.version} · up ${formatDuration(g.uptimeSec)} · pid ${g.pid}` +
    (g.worker === undefined ? '' : ` · worker ${g.worker}: this worker's share of the traffic`);
  renderTiles(status);
  renderHttpCache(status.httpCache);
  renderBackends(status);
  renderRoutes(status.routes);
  renderCallers(status.callers);
  renderPlugins(status.plugins);
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
  $('t-overload').textContent = admissionText(status.admission);
}

/** The admission tile: off, or the refusals of every limit and the gateway limit's use. */
function admissionText(admission) {
  if (!admission.enabled) return 'off';
  const refused = admission.limits.reduce((sum, l) => sum + l.refused, 0);
  const gateway = admission.limits.find((l) => l.scope === 'gateway');
  return gateway === undefined ? `${refused}` : `${refused} · ${gateway.inFlight} / ${gateway.limit} in flight`;
}

/** The HTTP cache panel: answers since the start by result, and what is stored now. */
function renderHttpCache(c) {
  $('http-cache-note').textContent = !c.enabled
    ? 'No route caches (cache: on a GET route, docs/caching.md).'
    : c.shared
      ? 'Since the gateway started; answers are shared with other replicas through Redis.'
      : 'Since the gateway started; answers are kept in this process only.';
  const b = c.broadcast;
  if (c.enabled && b !== null)
    $('http-cache-note').textContent += b.subscribed
      ? ` Purges told to other replicas: ${b.sent}, heard from them: ${b.received}; memory dropped ${b.resets} times.`
      : " Not hearing other replicas' purges (Redis subscription down): memory is dropped when it is back.";
  $('c-hits').textContent = String(c.hits);
  $('c-misses').textContent = String(c.misses);
  $('c-stale').textContent = String(c.stale);
  $('c-revalidated').textContent = String(c.revalidated);
  $('c-ratio').textContent = c.hitRatio === null ? 'no lookup yet' : `${Math.round(c.hitRatio * 100)}%`;
  $('c-entries').textContent = String(c.entries);
  $('c-bytes').textContent = bytes(c.bytes);
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
    routeTraffic.clear();
    const rows = routes.map((r) => {
      const kind = r.stream ?? (r.mapping.length > 0 ? `${r.kind} (${r.mapping.join(', ')})` : r.kind);
      const cells = ['', '', '', '', '', ''].map(() => el('td', { class: 'num' }));
      const traffic = el('div', { class: 'route-traffic' });
      if (r.split !== null || r.mirror !== null) routeTraffic.set(r.id, traffic);
      const row = el(
        'tr',
        { 'data-route': r.id, 'data-search': `${r.methods} ${r.path} ${r.backend} ${r.auth} ${kind}`.toLowerCase() },
        el('td', {}, r.methods),
        el('td', { class: 'mono' }, r.path),
        el('td', { class: 'mono' }, r.backend, traffic),
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
    const traffic = routeTraffic.get(r.id);
    if (traffic !== undefined) traffic.textContent = trafficLine(r);
  }
}

/** A split's arms with their weights and requests, and a mirror's copies, since the start. */
function trafficLine(r) {
  const parts = [];
  if (r.split !== null) {
    const total = r.split.reduce((sum, a) => sum + a.weight, 0);
    for (const a of r.split) parts.push(`${a.arm} ${Math.round((a.weight / total) * 100)}%: ${a.requests} req`);
  }
  if (r.mirror !== null) {
    const m = r.mirror;
    parts.push(
      `mirror ${m.percent}% to ${m.service}: ${m.answered} answered, ${m.failed} failed, ${m.dropped} dropped`,
    );
  }
  return parts.join(' · ');
}

export function applyFilter() {
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

/** The top callers (at most ten): each quota window as used/limit and the time until it resets. */
function renderCallers(callers) {
  $('callers-empty').hidden = callers.length > 0;
  $('caller-rows').replaceChildren(
    ...callers.map((c) => {
      const windows = c.windows
        .map((w) => `${w.window} ${w.used}/${w.limit}, resets in ${formatDuration(w.resetSec)}`)
        .join('; ');
      const full = c.windows.some((w) => w.used >= w.limit);
      return el(
        'tr',
        { 'data-caller': c.caller },
        el('td', { class: 'mono' }, c.caller),
        el('td', { class: 'mono' }, c.route ?? 'all'),
        el('td', {}, c.plan ?? '–'),
        el('td', { class: full ? 'bad' : '' }, windows || '–'),
        el('td', { class: 'num' }, String(c.quotaRefused)),
        el('td', { class: 'num' }, String(c.rateLimited)),
      );
    }),
  );
}

function renderPlugins(plugins) {
  $('plugins-empty').hidden = plugins.length > 0;
  $('plugin-rows').replaceChildren(
    ...plugins.map((p) =>
      el(
        'tr',
        { 'data-plugin': p.name },
        el('td', {}, p.name),
        el('td', { class: 'mono' }, p.module),
        el('td', { class: 'num' }, String(p.runs)),
        el('td', { class: `num${p.failed > 0 ? ' bad' : ''}` }, String(p.failed)),
        el('td', { class: `num${p.timeouts > 0 ? ' bad' : ''}` }, String(p.timeouts)),
        el('td', { class: 'num' }, ms(p.avgMs)),
      ),
    ),
  );
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
