/**
 * The fault soak: mixed load through the real gateway CLI while faults are injected, judged
 * against each route's contract, with the gateway's memory trend, descriptors, upstream sockets
 * and warn lines. See docs/soak.md.
 *
 *   npm run soak -- [--duration SEC] [--no-build] [--no-write]
 *
 * Load (fixed concurrency, all to 127.0.0.1): a proxied route, a local-JWT route (valid and
 * invalid HS256 tokens signed here), a mapped route (mapping cache and circuit breaker on), a
 * rate-limited route, an SSE route, a WebSocket echo route, a route whose backend never answers
 * (504 after timeouts.backendSec), and clients that cancel requests mid-flight; the proxied,
 * cancelling and SSE clients also over HTTP/2 (h2c by prior knowledge, `http2.cleartext`).
 * Faults: SIGHUP with a rewritten config file every 10 s; the mapping backend (a child process)
 * killed with SIGKILL every 30 s and restarted 5 s later.
 * Exit code 1 when a goal fails.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';
import { Agent, request } from 'undici';
import { connect as http2Connect, constants as http2Constants, type ClientHttp2Session } from 'node:http2';
import { WebSocket } from 'ws';
import { handle as benchBackend } from './backend.js';
import { CACHE_DIR, ROOT, freePort, rssMb, startProcess, transpileEntry, type Started } from './lib/processes.js';
import { porticoCommand } from './lib/candidates.js';
import { describeMachine, load1 } from './lib/machine.js';
import { RouteTally, WarnLog, establishedOnPort, fdCount, rssSlopePerMin } from './lib/soak-stats.js';
import { serve } from '../examples/demo/backends.js';
import { tickerService } from '../examples/demo/streams.js';
import { startWsBackend } from '../test/support/ws-backend.js';

const USAGE = `npm run soak -- [options]
  --duration SEC   length of the load (default 600, at least 30)
  --no-build       do not run \`npm run build\` first (uses dist/ as it is)
  --no-write       print only; do not write bench/results/
`;

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '600' },
    'no-build': { type: 'boolean' },
    'no-write': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
});
if (args.help === true) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const durationSec = Number(args.duration);
if (!Number.isFinite(durationSec) || durationSec < 30 || durationSec > 86_400) {
  process.stderr.write(`--duration must be a number of seconds from 30 to 86400, got "${args.duration}"\n${USAGE}`);
  process.exit(2);
}
const DURATION_MS = Math.round(durationSec * 1000);

// --- the settings every contract below is derived from ------------------------------------------

const BACKEND_SEC = 2;
const MAPPING_SEC = 1;
const BREAKER_TIMEOUT_SEC = 2;
const CACHE_TTL_SEC = 5;
const RATE_PER_SEC = 20;
const RATE_BURST = 20;
const HS256_SECRET = 'portico-soak-secret-0123456789abcdef';
const SIGHUP_EVERY_MS = 10_000;
const FIRST_KILL_MS = 20_000;
const KILL_EVERY_MS = 30_000;
const DOWN_FOR_MS = 5_000;
const SAMPLE_EVERY_MS = 5_000;
/** RSS is trended after this warm-up (a third of a short run, so a 60 s check still has samples). */
const WARMUP_MS = Math.min(60_000, Math.floor(DURATION_MS / 3));
/**
 * After the mapping backend is back, the circuit needs its open time before a probe, the probe
 * needs at most one mapping timeout, plus a margin: from then on every item must carry its tags.
 */
const MAPPING_SETTLE_MS = (BREAKER_TIMEOUT_SEC + MAPPING_SEC) * 1000 + 2_000;
/** No client wait is longer: the slowest contract (504 after backendSec) plus a margin for a busy machine. */
const CLIENT_TIMEOUT_MS = BACKEND_SEC * 1000 + 8_000;
/** A 504 is early when it comes before backendSec (less a timer's granularity), late after this. */
const HANG_LATE_MS = BACKEND_SEC * 1000 + 3_000;
/** Every backend closes keep-alive connections idle this long (Node's default), well before the after-load count. */
const BACKEND_KEEPALIVE_MS = 5_000;
/** When the figures "after the load" are taken: idle upstream connections are closed by then. */
const AFTER_LOAD_WAIT_MS = 2 * BACKEND_KEEPALIVE_MS;
const GOAL_RSS_SLOPE = 1;
const GOAL_WARN_PER_MIN = 100;
/** Descriptors the gateway may hold after the load beyond those it had before (a timer fd, a log pipe). */
const FD_SLACK = 3;

const HANG_ROUTE = 'GET /hang';

// --- backends ---------------------------------------------------------------------------------

function listen(server: Server): Promise<number> {
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r((server.address() as AddressInfo).port)));
}

function connections(server: Server): Promise<number> {
  return new Promise((r) => server.getConnections((err, n) => r(err ? -1 : n)));
}

/** The bench backend's handler, plus `/hang`, which takes the request and never answers. */
const hanging = new Set<ServerResponse>();
const mainBackend = createServer((req, res) => {
  if (req.url?.startsWith('/hang')) {
    hanging.add(res);
    res.on('close', () => hanging.delete(res));
    return;
  }
  benchBackend(req, res);
});
mainBackend.keepAliveTimeout = BACKEND_KEEPALIVE_MS;
const mainPort = await listen(mainBackend);
const sseBackend = await serve(tickerService, 0);
const ssePort = (sseBackend.address() as AddressInfo).port;
const wsBackend = await startWsBackend();

/** The mapping backend runs as a child process so it can be killed for real, always on one port. */
const mappingEntry = transpileEntry(resolve(ROOT, 'bench/backend.ts'));
const mappingPort = await freePort();
const startMapping = () =>
  startProcess({
    name: 'mapping backend',
    command: process.execPath,
    args: [mappingEntry, String(mappingPort), String(BACKEND_KEEPALIVE_MS)],
    core: undefined,
    ready: { kind: 'stdout-line' },
  });
let mapping: Started | undefined = await startMapping();
const spawned: { gateway?: ChildProcess } = {};
// However this process ends (an exception, Ctrl-C), its children must not outlive it.
process.once('exit', () => {
  for (const pid of [
    spawned.gateway?.exitCode === null && spawned.gateway.signalCode === null ? spawned.gateway.pid : undefined,
    mapping?.pid,
  ]) {
    try {
      if (pid !== undefined) process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));

// --- the gateway ------------------------------------------------------------------------------

function gatewayYaml(revision: number): string {
  const main = `127.0.0.1:${mainPort}`;
  return `# fault soak, revision ${revision} (each SIGHUP rewrites this line)
config:
  host: 127.0.0.1
  auth:
    secret: ${HS256_SECRET}
    defaultProtected: true
  circuitBreaker:
    enabled: true
    maxFailures: 5
    timeoutSec: ${BREAKER_TIMEOUT_SEC}
  mappingCache:
    enabled: true
    ttlSec: ${CACHE_TTL_SEC}
  timeouts:
    backendSec: ${BACKEND_SEC}
    mappingSec: ${MAPPING_SEC}
  http2: { cleartext: true }
routes:
  - { method: GET, route: /proxied, service: "${main}", path: /small, public: true }
  - { method: GET, route: /jwt, service: "${main}", path: /small }
  - method: GET
    route: /mapped
    service: "${main}"
    path: /items?n=10
    public: true
    mapping:
      - { path: "/users/{userId}", service: "127.0.0.1:${mappingPort}", tag: user }
      - { path: "/comments?postId={authorId}", service: "127.0.0.1:${mappingPort}", tag: comments }
  - method: GET
    route: /limited
    service: "${main}"
    path: /small
    public: true
    rateLimit: { requestsPerSec: ${RATE_PER_SEC}, burst: ${RATE_BURST} }
  # On the proxied route's origin: its steady successes keep that circuit closed, so the contract
  # of this route stays 504 (five timeouts in a row on an origin of its own would open it).
  - { method: GET, route: /hang, service: "${main}", path: /hang, public: true }
  - { method: GET, route: /slow, service: "${main}", path: /delay/300/small, public: true }
  - { method: GET, route: /events, service: "127.0.0.1:${ssePort}", path: /ticker, public: true, isSSE: true }
  - { method: GET, route: /echo, service: "${wsBackend.host}", path: /echo, public: true, isWebSocket: true }
`;
}

if (args['no-build'] !== true) {
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit', timeout: 300_000 });
  if (build.status !== 0) process.stderr.write(`soak: npm run build exited ${build.status}; running dist/ as it is\n`);
}
const runWith = porticoCommand(true);
mkdirSync(CACHE_DIR, { recursive: true });
const configFile = resolve(CACHE_DIR, 'soak-faults.yaml');
let revision = 0;
writeFileSync(configFile, gatewayYaml(revision));

const faults = new RouteTally(
  'faults (SIGHUP, mapping kill/restart, gateway)',
  'every reload confirmed, the mapping backend restarts, the gateway stays up',
);
const warns = new WarnLog(Date.now());
const errorLines = new Map<string, number>();
let logLines = 0;
let reloadsConfirmed = 0;
let reloadsRejected = 0;
let listening: ((port: number) => void) | undefined;

/** Most log lines are access lines at info: counted from their head, parsed only when they matter. */
function onLogLine(line: string): void {
  logLines++;
  if (
    line.startsWith('{"level":30,') &&
    !line.includes('"msg":"portico listening') &&
    !line.includes('"msg":"configuration reloaded"')
  )
    return;
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return;
  }
  const msg = typeof entry.msg === 'string' ? entry.msg : '';
  const level = typeof entry.level === 'number' ? entry.level : 0;
  if (msg.startsWith('portico listening') && listening !== undefined) listening(Number(entry.port));
  if (msg === 'configuration reloaded') reloadsConfirmed++;
  if (msg.startsWith('configuration reload rejected')) reloadsRejected++;
  if (level < 40) return;
  // The message with the field that tells its kinds apart (an access line's status, an error's kind).
  const detail =
    msg === 'request'
      ? `request ${String(entry.status)}`
      : typeof entry.kind === 'string'
        ? `${msg} (${entry.kind})`
        : typeof entry.reason === 'string'
          ? `${msg} (${entry.reason.slice(0, 60)})`
          : msg;
  warns.add({
    time: typeof entry.time === 'number' ? entry.time : Date.now(),
    msg: detail,
    byDesign: entry.route === HANG_ROUTE,
  });
  if (level >= 50 && errorLines.size < 50) errorLines.set(detail, (errorLines.get(detail) ?? 0) + 1);
}

const gatewayArgs = [
  ...runWith.command.slice(1),
  'start',
  '--config',
  configFile,
  '--port',
  '0',
  '--host',
  '127.0.0.1',
];
const gateway: ChildProcess = spawn(runWith.command[0] ?? process.execPath, gatewayArgs, {
  cwd: ROOT,
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, PORTICO_LOG_LEVEL: 'info' },
});
spawned.gateway = gateway;
createInterface({ input: gateway.stdout! }).on('line', onLogLine);
let gatewayStderr = '';
gateway.stderr!.on('data', (c: Buffer) => (gatewayStderr = (gatewayStderr + c.toString('utf8')).slice(-4000)));
const gatewayExit = new Promise<string>((r) =>
  gateway.once('exit', (code, signal) => r(code === null ? String(signal) : String(code))),
);
const gatewayPort = await Promise.race([
  new Promise<number>((r) => (listening = r)),
  gatewayExit.then((code) => Promise.reject(new Error(`gateway exited (${code}) before listening:\n${gatewayStderr}`))),
  sleep(15_000).then(() => Promise.reject(new Error(`gateway not listening within 15 s:\n${gatewayStderr}`))),
]);
const gatewayPid = gateway.pid ?? -1;
const base = `http://127.0.0.1:${gatewayPort}/api`;

// --- measurements -----------------------------------------------------------------------------

interface Snapshot {
  readonly fds: number | undefined;
  readonly rss: number | undefined;
  readonly main: number;
  readonly sse: number;
  readonly ws: number;
  readonly mapping: number;
}

async function snapshot(): Promise<Snapshot> {
  const [main, sse, ws] = await Promise.all([
    connections(mainBackend),
    connections(sseBackend),
    connections(wsBackend.server),
  ]);
  return { fds: fdCount(gatewayPid), rss: rssMb(gatewayPid), main, sse, ws, mapping: establishedOnPort(mappingPort) };
}
const upstreamSum = (s: Snapshot) => s.main + s.sse + s.ws + s.mapping;

const atStart = await snapshot();
const startedAt = Date.now();
const stop = new AbortController();
let stopping = false;
void gatewayExit.then((code) => {
  if (stopping) return;
  faults.fail(`gateway exited (${code}) during the load: ${gatewayStderr.slice(-300)}`);
  stopping = true;
  stop.abort();
});

const rssSamples: { tMs: number; mb: number }[] = [];
const sampler = setInterval(() => {
  const mb = rssMb(gatewayPid);
  if (mb !== undefined) rssSamples.push({ tMs: Date.now() - startedAt, mb });
  // The WebSocket test backend records every upgrade and socket; a long soak must not keep them.
  wsBackend.upgrades.splice(0);
  wsBackend.closes.splice(0);
  for (let i = wsBackend.sockets.length - 1; i >= 0; i--)
    if (wsBackend.sockets[i]!.readyState === WebSocket.CLOSED) wsBackend.sockets.splice(i, 1);
}, SAMPLE_EVERY_MS);

// --- clients ----------------------------------------------------------------------------------

const agent = new Agent({
  connections: 32,
  keepAliveTimeout: 30_000,
  headersTimeout: CLIENT_TIMEOUT_MS,
  bodyTimeout: CLIENT_TIMEOUT_MS,
});

const tallies = {
  proxied: new RouteTally('proxied GET /api/proxied', '200 with the backend body'),
  jwt: new RouteTally('local JWT GET /api/jwt', '200 with a valid token, 401 with an invalid one'),
  mapped: new RouteTally('mapped GET /api/mapped', '200; items carry their tags while the mapping backend is up'),
  limited: new RouteTally(
    'rate-limited GET /api/limited',
    `200 or 429; no more 200 than the bucket allows (${RATE_PER_SEC}/s, burst ${RATE_BURST})`,
  ),
  hang: new RouteTally('hanging GET /api/hang', `504 after backendSec (${BACKEND_SEC} s)`),
  abort: new RouteTally('aborting clients (/api/slow, /api/mapped)', 'cancelled, or 200 when the answer came first'),
  sse: new RouteTally('SSE GET /api/events', '200 text/event-stream, at least one event per stay'),
  ws: new RouteTally('WebSocket /api/echo', 'upgrade, every message echoed, clean close'),
  h2proxied: new RouteTally('h2c GET /api/proxied', '200 with the backend body'),
  h2abort: new RouteTally('h2c streams cancelled (/api/slow)', 'cancelled, or 200 when the answer came first'),
  h2sse: new RouteTally('h2c SSE GET /api/events', '200 text/event-stream, at least one event per stay'),
};

function errorName(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown };
  return typeof e.code === 'string' ? e.code : typeof e.name === 'string' ? e.name : 'error';
}

async function get(
  path: string,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<{ status: number; body: string; ms: number }> {
  const t0 = performance.now();
  const res = await request(`${base}${path}`, { dispatcher: agent, headers, signal });
  const body = await res.body.text();
  return { status: res.statusCode, body, ms: performance.now() - t0 };
}

/** One HTTP/2 connection shared by the h2c clients, opened again when the gateway closes it. */
let h2session: ClientHttp2Session | undefined;
function h2(): ClientHttp2Session {
  if (h2session === undefined || h2session.closed || h2session.destroyed) {
    h2session = http2Connect(`http://127.0.0.1:${gatewayPort}`);
    h2session.on('error', () => undefined);
  }
  return h2session;
}

/**
 * GET over h2c, bounded like the HTTP/1.1 clients; `onHead` sees the status and may end the wait
 * (an SSE stay). `signal` cancels the stream (RST_STREAM CANCEL).
 */
function h2get(
  path: string,
  signal?: AbortSignal,
  onData?: (chunk: Buffer) => void,
): Promise<{ status: number; contentType: string; body: string }> {
  return new Promise((resolveGet, rejectGet) => {
    const stream = h2().request({ ':path': `/api${path}` });
    let status = 0;
    let contentType = '';
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      stream.close(http2Constants.NGHTTP2_CANCEL);
      rejectGet(new Error(`h2 ${path}: no answer within ${CLIENT_TIMEOUT_MS} ms`));
    }, CLIENT_TIMEOUT_MS);
    const cancel = () => {
      clearTimeout(timer);
      stream.close(http2Constants.NGHTTP2_CANCEL);
      rejectGet(Object.assign(new Error('cancelled'), { name: 'AbortError' }));
    };
    if (signal !== undefined) signal.addEventListener('abort', cancel, { once: true });
    stream.on('response', (h) => {
      status = Number(h[':status']);
      contentType = String(h['content-type']);
    });
    stream.on('data', (c: Buffer) => (onData === undefined ? chunks.push(c) : onData(c)));
    stream.on('end', () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', cancel);
      resolveGet({ status, contentType, body: Buffer.concat(chunks).toString() });
    });
    stream.on('error', (err) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', cancel);
      rejectGet(err);
    });
  });
}

const loop = async (body: () => Promise<void>) => {
  while (!stopping) await body();
};

/** The proxied route's contract, over either protocol: 200 with the backend's 400-byte body. */
const proxiedClient = (tally: RouteTally, fetch: (path: string) => Promise<{ status: number; body: string }>) => () =>
  loop(async () => {
    try {
      const r = await fetch('/proxied');
      tally.record(
        String(r.status),
        r.status !== 200
          ? `status ${r.status}: ${r.body.slice(0, 120)}`
          : r.body.length !== 400
            ? `200 with a ${r.body.length}-byte body`
            : undefined,
      );
    } catch (err) {
      tally.record(`error:${errorName(err)}`, String(err));
    }
  });
const proxied = proxiedClient(tallies.proxied, (path) => get(path));

const secret = new TextEncoder().encode(HS256_SECRET);
const sign = (key: Uint8Array, exp: string | number) =>
  new SignJWT({ sub: 'soak', role: 'tester' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime(exp)
    .sign(key);
const invalidTokens = [
  await sign(new TextEncoder().encode('not-the-gateway-secret-0123456789abcdef'), '1h'),
  await sign(secret, Math.floor(Date.now() / 1000) - 60),
  'not.a.jwt',
];
let validToken = await sign(secret, '1h');
let jwtCount = 0;
const jwt = () =>
  loop(async () => {
    const n = jwtCount++;
    // Fresh tokens now and then, so the gateway's token cache sees turnover, not one entry.
    if (n % 200 === 0) validToken = await sign(secret, '1h');
    const kind = n % 4;
    const valid = kind !== 3;
    const authorization = valid
      ? `Bearer ${validToken}`
      : n % 3 === 0
        ? ''
        : `Bearer ${invalidTokens[n % invalidTokens.length]}`;
    try {
      const r = await get('/jwt', authorization === '' ? {} : { authorization });
      const want = valid ? 200 : 401;
      tallies.jwt.note(valid ? 'valid token' : 'invalid or missing token');
      tallies.jwt.record(
        String(r.status),
        r.status !== want ? `${valid ? 'valid' : 'invalid'} token got ${r.status}: ${r.body.slice(0, 120)}` : undefined,
      );
    } catch (err) {
      tallies.jwt.record(`error:${errorName(err)}`, String(err));
    }
  });

/** The mapping backend's state: `epoch` counts kills, so a request can tell an outage crossed it. */
const mappingState = { up: true, upSince: 0, epoch: 0 };
const mappingSettled = () => mappingState.up && Date.now() - mappingState.upSince >= MAPPING_SETTLE_MS;

const mapped = () =>
  loop(async () => {
    const settledAtStart = mappingSettled();
    const epoch = mappingState.epoch;
    try {
      const r = await get('/mapped');
      if (r.status !== 200) {
        tallies.mapped.record(String(r.status), `status ${r.status}: ${r.body.slice(0, 120)}`);
        return;
      }
      const items = JSON.parse(r.body) as Record<string, unknown>[];
      const missing = Array.isArray(items)
        ? items.filter((i) => i.user === undefined || i.comments === undefined).length
        : -1;
      if (missing === -1)
        return tallies.mapped.record('200', `200 whose body is not an array: ${r.body.slice(0, 120)}`);
      tallies.mapped.record('200');
      if (missing > 0) tallies.mapped.note('responses with items lacking tags');
      if (settledAtStart && mappingSettled() && epoch === mappingState.epoch) {
        tallies.mapped.note('responses checked for every tag (mapping backend up throughout)');
        if (missing > 0)
          tallies.mapped.fail(`${missing} of ${items.length} items lack tags while the mapping backend was up`);
      }
    } catch (err) {
      tallies.mapped.record(`error:${errorName(err)}`, String(err));
    }
  });

let limitedFirst = 0;
let limitedLast = 0;
const limited = () =>
  loop(async () => {
    limitedFirst ||= Date.now();
    try {
      const r = await get('/limited');
      tallies.limited.record(
        String(r.status),
        r.status === 200 || r.status === 429 ? undefined : `status ${r.status}: ${r.body.slice(0, 120)}`,
      );
    } catch (err) {
      tallies.limited.record(`error:${errorName(err)}`, String(err));
    }
    limitedLast = Date.now();
    // Twice the allowed rate: both answers show, and the 429s cost the machine little.
    await sleep(1000 / (2 * RATE_PER_SEC));
  });

let hangFastest = Infinity;
let hangSlowest = 0;
const hang = () =>
  loop(async () => {
    try {
      const r = await get('/hang');
      if (r.status === 504) {
        hangFastest = Math.min(hangFastest, r.ms);
        hangSlowest = Math.max(hangSlowest, r.ms);
      }
      const when = r.ms < BACKEND_SEC * 1000 - 50 ? 'early' : r.ms > HANG_LATE_MS ? 'late' : undefined;
      tallies.hang.record(
        String(r.status),
        r.status !== 504
          ? `status ${r.status}: ${r.body.slice(0, 120)}`
          : when !== undefined
            ? `504 ${when}: after ${Math.round(r.ms)} ms`
            : undefined,
      );
    } catch (err) {
      tallies.hang.record(`error:${errorName(err)}`, String(err));
    }
  });

let abortCount = 0;
const aborting = () =>
  loop(async () => {
    const path = abortCount++ % 2 === 0 ? '/slow' : '/mapped';
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 5 + Math.random() * 200);
    try {
      const r = await get(path, {}, controller.signal);
      tallies.abort.record(
        String(r.status),
        r.status !== 200 ? `${path} status ${r.status}: ${r.body.slice(0, 120)}` : undefined,
      );
    } catch (err) {
      if (controller.signal.aborted) tallies.abort.record('cancelled');
      else tallies.abort.record(`error:${errorName(err)}`, `${path}: ${String(err)}`);
    } finally {
      clearTimeout(timer);
    }
  });

const sse = () =>
  loop(async () => {
    // Stays 2 to 4 s: the ticker sends an event a second, so every stay sees at least one.
    const stayMs = 2_000 + Math.random() * 2_000;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), stayMs);
    let events = 0;
    let status = 0;
    try {
      const res = await request(`${base}/events`, { dispatcher: agent, signal: controller.signal });
      status = res.statusCode;
      if (status !== 200 || !String(res.headers['content-type']).startsWith('text/event-stream')) {
        const text = await res.body.text();
        clearTimeout(timer);
        return tallies.sse.record(
          String(status),
          `status ${status} (${String(res.headers['content-type'])}): ${text.slice(0, 120)}`,
        );
      }
      for await (const chunk of res.body) events += (String(chunk).match(/^event: tick$/gm) ?? []).length;
      // The stream ended before the client left: SSE streams here never end on their own.
      tallies.sse.record('200', `stream ended by the gateway after ${events} events`);
    } catch (err) {
      if (!controller.signal.aborted)
        tallies.sse.record(status === 0 ? `error:${errorName(err)}` : String(status), String(err));
      else if (status === 0)
        tallies.sse.record('no answer', `no response head within the ${Math.round(stayMs)} ms stay`);
      else tallies.sse.record('200', events === 0 ? `no event within a ${Math.round(stayMs)} ms stay` : undefined);
    } finally {
      clearTimeout(timer);
      tallies.sse.note('events received', events);
    }
  });

const h2proxied = proxiedClient(tallies.h2proxied, (path) => h2get(path));

const h2aborting = () =>
  loop(async () => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 5 + Math.random() * 200);
    try {
      const r = await h2get('/slow', controller.signal);
      tallies.h2abort.record(
        String(r.status),
        r.status !== 200 ? `status ${r.status}: ${r.body.slice(0, 120)}` : undefined,
      );
    } catch (err) {
      if (controller.signal.aborted) tallies.h2abort.record('cancelled');
      else tallies.h2abort.record(`error:${errorName(err)}`, String(err));
    } finally {
      clearTimeout(timer);
    }
  });

const h2sse = () =>
  loop(async () => {
    const stayMs = 2_000 + Math.random() * 2_000;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), stayMs);
    let events = 0;
    try {
      const r = await h2get('/events', controller.signal, (c) => {
        events += (String(c).match(/^event: tick$/gm) ?? []).length;
      });
      tallies.h2sse.record(
        String(r.status),
        r.status !== 200 ? `status ${r.status}` : `stream ended by the gateway after ${events} events`,
      );
    } catch (err) {
      if (!controller.signal.aborted) tallies.h2sse.record(`error:${errorName(err)}`, String(err));
      else tallies.h2sse.record('200', events === 0 ? `no event within a ${Math.round(stayMs)} ms stay` : undefined);
    } finally {
      clearTimeout(timer);
      tallies.h2sse.note('events received', events);
    }
  });

/** Resolves with the result of `setup` or rejects after `ms`; every WebSocket wait is bounded. */
function within<T>(
  ms: number,
  what: string,
  setup: (resolve: (v: T) => void, reject: (e: Error) => void) => void,
): Promise<T> {
  return new Promise<T>((resolveWait, rejectWait) => {
    const timer = setTimeout(() => rejectWait(new Error(`${what}: not within ${ms} ms`)), ms);
    setup(
      (v) => (clearTimeout(timer), resolveWait(v)),
      (e) => (clearTimeout(timer), rejectWait(e)),
    );
  });
}

let wsCount = 0;
const ws = () =>
  loop(async () => {
    const id = wsCount++;
    const socket = new WebSocket(`ws://127.0.0.1:${gatewayPort}/api/echo`, {
      handshakeTimeout: 5_000,
      perMessageDeflate: false,
    });
    const errors: Error[] = [];
    socket.on('error', (e) => errors.push(e));
    try {
      await within<void>(6_000, 'open', (ok, fail) => {
        socket.once('open', () => ok());
        socket.once('unexpected-response', (_req, res) => fail(new Error(`upgrade answered ${res.statusCode}`)));
        socket.once('error', fail);
      });
      const messages = 3 + (id % 3);
      for (let i = 0; i < messages; i++) {
        const text = `soak ${id} message ${i}`;
        const echo = await within<string>(5_000, 'echo', (ok) => {
          socket.once('message', (data) => ok(String(data)));
          socket.send(text);
        });
        if (echo !== text) throw new Error(`echo mismatch: sent "${text}", got "${echo.slice(0, 60)}"`);
      }
      tallies.ws.note('messages echoed', messages);
      const code = await within<number>(5_000, 'close', (ok) => {
        socket.once('close', (c) => ok(c));
        socket.close(1000, 'done');
      });
      tallies.ws.record('101', code === 1000 ? undefined : `closed with ${code}`);
    } catch (err) {
      socket.terminate();
      tallies.ws.record(
        `error:${(err as Error).message.split(':')[0]}`,
        `${String(err)}${errors.length > 0 ? ` (${errors.map(String).join('; ')})` : ''}`,
      );
    }
  });

// --- faults -----------------------------------------------------------------------------------

let sighupsSent = 0;
async function sighups(): Promise<void> {
  while (!stopping) {
    try {
      await sleep(SIGHUP_EVERY_MS, undefined, { signal: stop.signal });
    } catch {
      return;
    }
    revision++;
    writeFileSync(configFile, gatewayYaml(revision));
    if (gateway.kill('SIGHUP')) sighupsSent++;
  }
}

const outages: { down: number; up: number | undefined }[] = [];
async function restartMapping(): Promise<void> {
  try {
    mapping = await startMapping();
    mappingState.up = true;
    mappingState.upSince = Date.now();
  } catch (err) {
    faults.record('restart failed', `mapping backend restart: ${String(err)}`);
    return;
  }
  faults.record('mapping restarted');
}

async function mappingOutages(): Promise<void> {
  let next = startedAt + FIRST_KILL_MS;
  while (!stopping) {
    try {
      await sleep(Math.max(0, next - Date.now()), undefined, { signal: stop.signal });
    } catch {
      return;
    }
    next += KILL_EVERY_MS;
    const child = mapping;
    if (child === undefined) continue;
    mappingState.up = false;
    mappingState.epoch++;
    const outage = { down: Date.now(), up: undefined as number | undefined };
    outages.push(outage);
    // Warn lines are counted as the outage's from the kill until the mapping is settled again.
    const window = warns.openWindow(outage.down, Number.POSITIVE_INFINITY);
    process.kill(child.pid, 'SIGKILL');
    await child.stop();
    mapping = undefined;
    faults.record('mapping killed');
    // The restart happens even when the run ends meanwhile: the after-load figures need it up.
    await sleep(DOWN_FOR_MS);
    await restartMapping();
    outage.up = Date.now();
    window.setEnd(outage.up + MAPPING_SETTLE_MS);
  }
}

// --- run --------------------------------------------------------------------------------------

process.stdout.write(
  `soak: gateway pid ${gatewayPid} on ${gatewayPort}, ${durationSec} s of load; faults every ${SIGHUP_EVERY_MS / 1000} s (SIGHUP) and ${KILL_EVERY_MS / 1000} s (mapping backend kill)\n`,
);
const progress = setInterval(() => {
  const sent = Object.values(tallies).reduce((n, t) => n + t.sent, 0);
  const bad = Object.values(tallies).reduce((n, t) => n + t.unexpected, 0) + faults.unexpected;
  process.stdout.write(
    `  ${Math.round((Date.now() - startedAt) / 1000)} s: ${sent} sent, ${bad} unexpected, RSS ${rssMb(gatewayPid)?.toFixed(0) ?? '?'} MB, ${warns.total} warn lines\n`,
  );
}, 30_000);
const stopTimer = setTimeout(() => {
  stopping = true;
  stop.abort();
}, DURATION_MS);

const clients = [
  ...Array.from({ length: 4 }, proxied),
  ...Array.from({ length: 2 }, jwt),
  ...Array.from({ length: 2 }, mapped),
  limited(),
  hang(),
  aborting(),
  ...Array.from({ length: 2 }, sse),
  ...Array.from({ length: 2 }, ws),
  ...Array.from({ length: 2 }, h2proxied),
  h2aborting(),
  h2sse(),
];
const faultLoops = [sighups(), mappingOutages()];
await Promise.all(clients);
const loadEnded = Date.now();
clearTimeout(stopTimer);
clearInterval(sampler);
clearInterval(progress);
stopping = true;
stop.abort();
await Promise.all(faultLoops);
if (mapping === undefined) await restartMapping();

const atEnd = await snapshot();
await agent.close();
h2session?.close();
await sleep(Math.max(0, loadEnded + AFTER_LOAD_WAIT_MS - Date.now()));
const after = await snapshot();

gateway.kill('SIGTERM');
const exitCode = await Promise.race([gatewayExit, sleep(20_000).then(() => 'no exit within 20 s')]);
if (exitCode !== '0') {
  gateway.kill('SIGKILL');
  faults.fail(`gateway exit on SIGTERM: ${exitCode}`);
}
if (reloadsConfirmed !== sighupsSent)
  faults.fail(`${sighupsSent} SIGHUP sent, ${reloadsConfirmed} reloads logged (${reloadsRejected} rejected)`);
await mapping?.stop();
mapping = undefined;
for (const res of hanging) res.destroy();
await Promise.all([
  wsBackend.close(),
  new Promise((r) => mainBackend.close(r)),
  new Promise((r) => sseBackend.close(r)),
]);

// --- report -----------------------------------------------------------------------------------

const elapsedSec = (loadEnded - startedAt) / 1000;
const allowed200 = RATE_BURST + RATE_PER_SEC * ((limitedLast - limitedFirst) / 1000) + 1;
const limited200 = tallies.limited.outcomes.get('200') ?? 0;
if (limited200 > allowed200 * 1.05)
  tallies.limited.fail(`${limited200} answers 200, the bucket allows ${Math.floor(allowed200)}`);

const rows = [...Object.values(tallies), faults];
const unexpected = rows.reduce((n, t) => n + t.unexpected, 0);
const trend = rssSamples.filter((s) => s.tMs >= WARMUP_MS);
const slope = rssSlopePerMin(trend);
// Not a goal: a heap still growing into its working size shows in the first half, a leak in both.
const lastHalf = rssSlopePerMin(rssSamples.filter((s) => s.tMs >= DURATION_MS / 2));
const outage = warns.outageRate(loadEnded);
const fmt = (v: number | undefined, d = 0) => (v === undefined ? 'n/a' : v.toFixed(d));
const sockets = (s: Snapshot) => `${upstreamSum(s)} (main ${s.main}, SSE ${s.sse}, WS ${s.ws}, mapping ${s.mapping})`;
const idle =
  upstreamSum(after) <= upstreamSum(atStart) &&
  after.fds !== undefined &&
  atStart.fds !== undefined &&
  after.fds <= atStart.fds + FD_SLACK;

const goals: [string, boolean][] = [
  [`zero unexpected failures (${unexpected})`, unexpected === 0],
  [
    `RSS slope < ${GOAL_RSS_SLOPE} MB/min after ${WARMUP_MS / 1000} s warm-up (${fmt(slope, 2)} MB/min over ${trend.length} samples)`,
    slope !== undefined && slope < GOAL_RSS_SLOPE,
  ],
  [
    `sockets back to idle ${AFTER_LOAD_WAIT_MS / 1000} s after the load (upstream ${upstreamSum(after)} <= ${upstreamSum(atStart)} at start; gateway fds ${fmt(after.fds)} <= ${fmt(atStart.fds)} + ${FD_SLACK})`,
    idle,
  ],
  [
    `warn lines during mapping outages < ${GOAL_WARN_PER_MIN}/min, hanging route's own lines aside (${outage === undefined ? 'no outage' : `${outage.outagePerMin.toFixed(0)}/min over ${outage.minutes.toFixed(1)} min`})`,
    outage !== undefined && outage.outagePerMin < GOAL_WARN_PER_MIN,
  ],
];

const machine = describeMachine();
const lines: string[] = [];
lines.push(`## Routes (${elapsedSec.toFixed(0)} s of load, 1-min load average at the end ${load1().toFixed(2)})`, '');
lines.push('| route | contract | sent | statuses | unexpected |', '|---|---|---:|---|---:|');
for (const t of rows) lines.push(`| ${t.name} | ${t.contract} | ${t.sent} | ${t.outcomeText()} | ${t.unexpected} |`);
lines.push('');
for (const t of rows) {
  const notes = [...t.notes.entries()].map(([k, n]) => `${k} ${n}`);
  if (notes.length > 0) lines.push(`- ${t.name}: ${notes.join(', ')}`);
  for (const s of t.samples) lines.push(`  - unexpected: ${s}`);
}
lines.push(
  `- hanging route: 504 after ${fmt(hangFastest === Infinity ? undefined : hangFastest)} to ${fmt(hangSlowest || undefined)} ms (backendSec ${BACKEND_SEC} s)`,
);
lines.push(`- rate-limited route: ${limited200} answers 200, the bucket allows at most ${Math.floor(allowed200)}`);
lines.push(
  `- SIGHUP sent ${sighupsSent}, reloads logged ${reloadsConfirmed}, rejected ${reloadsRejected}; mapping outages ${outages.length}`,
);
lines.push('', '## Gateway process', '');
lines.push(`| | start | end of load | ${AFTER_LOAD_WAIT_MS / 1000} s after |`, '|---|---:|---:|---:|');
lines.push(`| RSS MB | ${fmt(atStart.rss)} | ${fmt(atEnd.rss)} | ${fmt(after.rss)} |`);
lines.push(`| open fds | ${fmt(atStart.fds)} | ${fmt(atEnd.fds)} | ${fmt(after.fds)} |`);
lines.push(`| upstream sockets | ${sockets(atStart)} | ${sockets(atEnd)} | ${sockets(after)} |`);
lines.push(
  '',
  `RSS slope after the warm-up ${fmt(slope, 2)} MB/min, over the last half of the run ${fmt(lastHalf, 2)} MB/min`,
);
lines.push(
  '',
  `RSS every ${SAMPLE_EVERY_MS / 1000} s (MB): ${rssSamples.map((s) => `${Math.round(s.tMs / 1000)}s=${s.mb.toFixed(0)}`).join(' ')}`,
);
lines.push('', '## Gateway log', '');
lines.push(`${logLines} lines; warn or worse ${warns.total}; per minute: ${warns.perMinute.join(', ') || 'none'}`);
if (outage !== undefined)
  lines.push(
    `during outages (${outage.minutes.toFixed(1)} min): ${outage.all} warn lines, ${outage.outage} of them not from the hanging route`,
  );
lines.push('', 'Top warn messages:', '');
for (const [msg, n] of warns.top(8)) lines.push(`- ${n} x ${msg}`);
if (errorLines.size > 0)
  lines.push('', `Error lines: ${[...errorLines.entries()].map(([m, n]) => `${n} x ${m}`).join('; ')}`);
lines.push('', '## Goals', '');
for (const [text, ok] of goals) lines.push(`${ok ? 'PASS' : 'FAIL'} ${text}`);
const report = lines.join('\n') + '\n';
process.stdout.write('\n' + report);

if (args['no-write'] !== true) {
  const dir = resolve(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = resolve(dir, `${new Date().toISOString().slice(0, 10)}-${machine.commit}-soak.md`);
  const command =
    process.env.npm_lifecycle_event === 'soak'
      ? `npm run soak -- ${process.argv.slice(2).join(' ')}`
      : `node --import tsx bench/soak-faults.ts ${process.argv.slice(2).join(' ')}`;
  const header = [
    `# Fault soak ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC (${machine.commit}${machine.dirty ? ', uncommitted changes in the tree' : ''})`,
    '',
    `- command: \`${command.trim()}\``,
    `- machine: ${machine.nproc} CPUs (nproc), ${machine.cpuModel}, Linux ${machine.kernel}`,
    `- Node ${machine.node}; gateway: ${runWith.note ?? 'built dist/src/cli/main.js'}`,
    `- shared machine: other work ran at the same time (load average above), so figures are noisy`,
  ].join('\n');
  writeFileSync(
    file,
    `${header}\n\n${report}\n## Gateway configuration (revision 0)\n\n\`\`\`yaml\n${gatewayYaml(0)}\`\`\`\n`,
  );
  process.stdout.write(`\nwritten to ${file}\n`);
}
process.exit(goals.every(([, ok]) => ok) ? 0 : 1);
