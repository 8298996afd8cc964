/**
 * The edge (docs/tls.md): what TLS and HTTP/2 on the listener cost, against nginx doing the same
 * in the same run.
 *
 *   node --import tsx bench/edge.ts [--duration 5] [--rounds 3] [--handshakes 3000] [--out FILE]
 *
 * 1. Throughput of a small GET proxied to an nginx backend, through Portico, the Node floor
 *    (bench/node-floor.ts, node:http2's compatibility API for h2; and its h2 through the core
 *    stream API, a row of its own) and nginx as a proxy (one worker), each over plain HTTP/1.1, HTTPS/1.1 and h2 over TLS, all driven by
 *    h2load at 50 requests in flight: 50 connections for HTTP/1.1, 50 streams on 10 connections
 *    for h2. Rounds rotate the rows. Goals: Portico's h2 and HTTPS/1.1 >= 0.80x its plain HTTP/1.1.
 * 2. TLS handshakes: `--handshakes` new connections of one request each (h2load --h1, opened at
 *    1,000 per second); the proxy's CPU time per connection, counted from /proc, gives handshakes per second
 *    on one core. The cipher and curve are read from an openssl s_client handshake.
 * The proxies run on core 0 when `taskset` exists (Portico's stdout drained by another process),
 * the nginx backend and h2load on core 1. Certificates are made with openssl for the run.
 */
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cpuSeconds, freePort, porticoStartArgs, startProcess, type Started } from './lib/processes.js';
import { describeMachine } from './lib/machine.js';
import { emitResults, median, runBench } from './lib/report.js';
import { nginxVersion, startNginxBackend } from './lib/nginx.js';
import { BUILT_IN_SCENARIOS } from './lib/scenarios.js';
import { edgeSetup, h2load, makeCertificate, startFloor, type H2loadResult } from './lib/h2load.js';

type Proxy = 'portico' | 'floor' | 'nginx';
/** A row of its own: the Node floor's h2 through node:http2's core API (`--h2-core`). */
type Row = Proxy | 'core';
type Protocol = 'http1' | 'https1' | 'h2';
const PROTOCOLS: readonly { id: Protocol; label: string }[] = [
  { id: 'http1', label: 'HTTP/1.1 plain' },
  { id: 'https1', label: 'HTTPS/1.1' },
  { id: 'h2', label: 'h2 over TLS' },
];
const PROXIES: readonly Proxy[] = ['portico', 'floor', 'nginx'];
const PROXY_LABELS: Record<Row, string> = {
  portico: 'Portico',
  floor: 'Node floor (bench/node-floor.ts)',
  core: 'Node floor, h2 by the core API (--h2-core)',
  nginx: 'nginx',
};

/** Load at 50 requests in flight for `seconds`. */
function loadArgs(protocol: Protocol, url: string, seconds: number): string[] {
  const common = ['-D', String(seconds), '--warm-up-time', '1'];
  return protocol === 'h2' ? [...common, '-c', '10', '-m', '5', url] : [...common, '--h1', '-c', '50', '-m', '1', url];
}

/** The TLS version, cipher and key exchange group a default openssl client gets on `port`. */
function handshakeDescription(port: number): string {
  const r = execFileSync('sh', ['-c', `openssl s_client -connect 127.0.0.1:${port} -brief </dev/null 2>&1`], {
    encoding: 'utf8',
  });
  const version = /Protocol version: (\S+)/.exec(r)?.[1] ?? '?';
  const cipher = /Ciphersuite: (\S+)/.exec(r)?.[1] ?? '?';
  const group = /(?:Server Temp Key|Negotiated TLS1.3 group): ([^\n]+)/.exec(r)?.[1]?.trim() ?? '?';
  return `${version}, ${cipher}, key exchange ${group}, ECDSA P-256 certificate`;
}

async function startPortico(
  dir: string,
  tls: { cert: string; key: string } | undefined,
  backendPort: number,
  core: number | undefined,
  drainCore: number | undefined,
): Promise<Started> {
  const port = await freePort();
  const healthPort = tls === undefined ? port : await freePort();
  const file = join(dir, tls === undefined ? 'plain.yaml' : 'tls.yaml');
  writeFileSync(
    file,
    `config:
  rateLimit: { enabled: false }
${tls === undefined ? '' : `  tls: { certFile: ${tls.cert}, keyFile: ${tls.key}, redirectPort: ${healthPort} }\n`}routes:
  - { method: GET, route: /small, service: "127.0.0.1:${backendPort}", path: /small }
`,
  );
  return startProcess({
    name: `portico ${tls === undefined ? 'plain' : 'tls'}`,
    command: process.execPath,
    args: porticoStartArgs(file, port),
    core,
    drainCore,
    ready: { kind: 'health', port: healthPort, path: '/health' },
    timeoutMs: 30_000,
  }).then((s) => ({ ...s, port }));
}

async function startNginxProxy(
  binary: string,
  dir: string,
  tls: { cert: string; key: string },
  backendPort: number,
  core: number | undefined,
): Promise<{ started: Started; plain: number; secure: number; worker: number }> {
  const plain = await freePort();
  const secure = await freePort();
  const conf = join(dir, 'nginx-proxy.conf');
  const location = [
    '    location /api/ {',
    '      proxy_pass http://backend/;',
    '      proxy_http_version 1.1;',
    '      proxy_set_header Connection "";',
    '    }',
    '    location = /health { return 200 "ok"; }',
  ];
  writeFileSync(
    conf,
    [
      'daemon off;',
      'worker_processes 1;',
      `pid ${join(dir, 'nginx-proxy.pid')};`,
      `error_log ${join(dir, 'nginx-proxy.log')} warn;`,
      'events { worker_connections 8192; }',
      'http {',
      '  access_log off;',
      '  keepalive_requests 100000000;',
      '  tcp_nodelay on;',
      `  client_body_temp_path ${join(dir, 'body')};`,
      `  proxy_temp_path ${join(dir, 'proxy')};`,
      `  fastcgi_temp_path ${join(dir, 'fastcgi')};`,
      `  uwsgi_temp_path ${join(dir, 'uwsgi')};`,
      `  scgi_temp_path ${join(dir, 'scgi')};`,
      `  upstream backend { server 127.0.0.1:${backendPort}; keepalive 64; }`,
      `  server { listen 127.0.0.1:${plain};`,
      ...location,
      '  }',
      `  server { listen 127.0.0.1:${secure} ssl http2;`,
      `    ssl_certificate ${tls.cert};`,
      `    ssl_certificate_key ${tls.key};`,
      '    http2_max_concurrent_streams 128;',
      ...location,
      '  }',
      '}',
      '',
    ].join('\n'),
  );
  const started = await startProcess({
    name: 'nginx proxy',
    command: binary,
    args: ['-p', dir, '-e', join(dir, 'nginx-proxy.log'), '-c', conf],
    core,
    ready: { kind: 'health', port: plain, path: '/health' },
    stdout: 'ignore',
  });
  const workers = execFileSync('pgrep', ['-P', String(started.pid)], { encoding: 'utf8' })
    .trim()
    .split('\n');
  return { started, plain, secure, worker: Number(workers[0]) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '3' },
      handshakes: { type: 'string', default: '3000' },
      out: { type: 'string' },
    },
  });
  const durationSec = Number(values.duration);
  const rounds = Number(values.rounds);
  const handshakes = Number(values.handshakes);
  const { pinning, nginx, dir } = edgeSetup('edge');
  const started: Started[] = [];
  const m = describeMachine();
  const lines: string[] = [];
  try {
    const tls = makeCertificate(dir);
    const small = BUILT_IN_SCENARIOS.find((s) => s.id === 'small')!;
    const backend = await startNginxBackend(nginx, [small], pinning?.loadCore);
    started.push(backend);
    const plainPortico = await startPortico(dir, undefined, backend.port, pinning?.proxyCore, pinning?.loadCore);
    started.push(plainPortico);
    const tlsPortico = await startPortico(dir, tls, backend.port, pinning?.proxyCore, pinning?.loadCore);
    started.push(tlsPortico);
    const proxy = await startNginxProxy(nginx, dir, tls, backend.port, pinning?.proxyCore);
    started.push(proxy.started);
    const floor = async (extra: string[]) => {
      const s = await startFloor(backend.port, pinning?.proxyCore, extra);
      started.push(s);
      return s;
    };
    const plainFloor = await floor([]);
    const tlsFloor = await floor(['--tls', tls.cert, tls.key]);
    const coreFloor = await floor(['--tls', tls.cert, tls.key, '--h2-core']);
    const ports: Record<Row, { plain: number; secure: number }> = {
      portico: { plain: plainPortico.port, secure: tlsPortico.port },
      floor: { plain: plainFloor.port, secure: tlsFloor.port },
      core: { plain: plainFloor.port, secure: coreFloor.port },
      nginx: { plain: proxy.plain, secure: proxy.secure },
    };

    const url = (p: Row, protocol: Protocol) =>
      protocol === 'http1'
        ? `http://127.0.0.1:${ports[p].plain}/api/small`
        : `https://127.0.0.1:${ports[p].secure}/api/small`;
    const rows = [
      ...PROXIES.flatMap((p) => PROTOCOLS.map((protocol) => ({ p, protocol, key: `${p} ${protocol.id}` }))),
      { p: 'core' as const, protocol: PROTOCOLS[2]!, key: 'core h2' },
    ];
    const samples = new Map<string, H2loadResult[]>(rows.map((r) => [r.key, []]));
    for (const r of rows) await h2load(loadArgs(r.protocol.id, url(r.p, r.protocol.id), 1), pinning?.loadCore);
    for (let round = 1; round <= rounds; round++)
      for (let i = 0; i < rows.length; i++) {
        const r = rows[(i + round) % rows.length]!;
        const res = await h2load(loadArgs(r.protocol.id, url(r.p, r.protocol.id), durationSec), pinning?.loadCore);
        samples.get(r.key)!.push(res);
        process.stderr.write(`round ${round} ${r.key.padEnd(16)} ${Math.round(res.rps)} req/s\n`);
      }
    const rps = (key: string) => median(samples.get(key)!.map((s) => s.rps));

    // Handshakes: new connections of one request each, opened at 1,000 per second.
    const newConnections = (n: number, port: number) => [
      '--h1',
      '-n',
      String(n),
      '-c',
      String(n),
      '--rate',
      '10',
      '--rate-period',
      '10ms',
      `https://127.0.0.1:${port}/api/small`,
    ];
    const handshakeRows: { label: string; usPerConnection: number; failed: number }[] = [];
    for (const [label, port, pid] of [
      ['Portico', tlsPortico.port, tlsPortico.pid],
      ['nginx', proxy.secure, proxy.worker],
    ] as const) {
      await h2load(newConnections(200, port), pinning?.loadCore);
      const before = cpuSeconds(pid);
      const res = await h2load(newConnections(handshakes, port), pinning?.loadCore);
      const used = cpuSeconds(pid) - before;
      handshakeRows.push({
        label,
        usPerConnection: (used * 1e6) / Math.max(1, res.done),
        failed: res.failed + res.non2xx,
      });
    }
    const handshake = handshakeDescription(tlsPortico.port);

    const ratio = (p: Row, protocol: Protocol) => rps(`${p} ${protocol}`) / rps(`${p === 'core' ? 'floor' : p} http1`);
    lines.push(
      `# TLS and HTTP/2 on the listener (${new Date().toISOString().slice(0, 10)}, ${m.commit}${m.dirty ? ', uncommitted changes' : ''})`,
      '',
      `Machine: ${m.cpuModel}, ${m.nproc} CPUs, kernel ${m.kernel}; Node ${m.node}; ${execFileSync('h2load', ['--version'], { encoding: 'utf8' }).trim()}; backend and reference proxy ${nginxVersion(nginx)} (one worker each).`,
      `Command: \`node --import tsx bench/edge.ts --duration ${durationSec} --rounds ${rounds} --handshakes ${handshakes}\`.`,
      `${pinning ? `Proxies on core ${pinning.proxyCore}; the nginx backend, Portico's log drain and h2load on core ${pinning.loadCore}` : 'no CPU pinning'}. Small GET (400 B JSON) at 50 requests in flight: 50 connections for HTTP/1.1, 50 streams on 10 connections for h2.`,
      `TLS: ${handshake}.`,
      '',
      '## Throughput',
      '',
      '| proxy | protocol | median req/s | mean latency ms | vs its plain HTTP/1.1 | failed + non-2xx |',
      '|---|---|---|---|---|---|',
      ...rows.map((r) => {
        const s = samples.get(r.key)!;
        const bad = s.reduce((n, x) => n + x.failed + x.non2xx, 0);
        return `| ${PROXY_LABELS[r.p]} | ${r.protocol.label} | ${Math.round(rps(r.key))} | ${median(s.map((x) => x.meanMs)).toFixed(2)} | ${ratio(r.p, r.protocol.id).toFixed(3)}x | ${bad} |`;
      }),
      '',
      `Portico h2 / plain HTTP/1.1: ${ratio('portico', 'h2').toFixed(3)}x (goal >= 0.80x); HTTPS/1.1 / plain: ${ratio('portico', 'https1').toFixed(3)}x (goal >= 0.80x). nginx, same run: h2 ${ratio('nginx', 'h2').toFixed(3)}x, HTTPS/1.1 ${ratio('nginx', 'https1').toFixed(3)}x.`,
      `Node floor, same run: h2 ${ratio('floor', 'h2').toFixed(3)}x, HTTPS/1.1 ${ratio('floor', 'https1').toFixed(3)}x. Portico / Node floor: plain ${(rps('portico http1') / rps('floor http1')).toFixed(3)}x, HTTPS/1.1 ${(rps('portico https1') / rps('floor https1')).toFixed(3)}x, h2 ${(rps('portico h2') / rps('floor h2')).toFixed(3)}x.`,
      `The Node floor's h2 through the core API instead of the compatibility layer: ${ratio('core', 'h2').toFixed(3)}x its plain HTTP/1.1 (${(rps('core h2') / rps('floor h2')).toFixed(3)}x its compatibility-layer h2).`,
      `Portico / nginx: plain ${(rps('portico http1') / rps('nginx http1')).toFixed(3)}x, HTTPS/1.1 ${(rps('portico https1') / rps('nginx https1')).toFixed(3)}x, h2 ${(rps('portico h2') / rps('nginx h2')).toFixed(3)}x.`,
      '',
      '## TLS handshakes',
      '',
      `${handshakes} new connections of one request each (h2load --h1, opened at 1,000 per second); CPU time of the proxy process per connection, handshake and request included.`,
      '',
      '| proxy | CPU µs per new connection | new connections per second on one core | failed |',
      '|---|---|---|---|',
      ...handshakeRows.map(
        (h) =>
          `| ${h.label} | ${h.usPerConnection.toFixed(0)} | ${Math.round(1e6 / h.usPerConnection)} | ${h.failed} |`,
      ),
      '',
    );
  } finally {
    for (const s of started.reverse()) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  emitResults(lines.join('\n'), values.out);
}

runBench(main);
