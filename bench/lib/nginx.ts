/**
 * The bench backend when nginx is installed: the static answers of bench/backend.ts for the
 * built-in scenarios (GET /small, GET /large, POST /echo), served by one nginx worker pinned to the
 * load core, with keep-alive connections that are never closed by a request count. nginx answers
 * such requests with a fraction of the CPU a Node server needs, so the load core (load generator
 * plus backend) stops being what limits every candidate: "backend hit directly" then runs well
 * above the Node floor, and the ratios to the floor measure the proxies instead of the load side.
 * The configuration is written into a temporary directory (removed at stop) and nginx runs in
 * the foreground, so stopping it is a signal to the process started here.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startProcess, type Started } from './processes.js';
import { jsonOfSize, type BenchScenario } from './scenarios.js';

/** The nginx binary when one runs here (`nginx -v` works), else undefined. */
export function findNginx(): string | undefined {
  for (const candidate of ['nginx', '/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx']) {
    const r = spawnSync(candidate, ['-v'], { encoding: 'utf8' });
    if (r.error === undefined && /nginx version/.test(`${r.stdout}${r.stderr}`)) return candidate;
  }
  return undefined;
}

/** `nginx/1.22.1`, for the results header. */
export function nginxVersion(binary: string): string {
  const r = spawnSync(binary, ['-v'], { encoding: 'utf8' });
  return /nginx\/[\d.]+/.exec(`${r.stdout}${r.stderr}`)?.[0] ?? 'nginx';
}

/** The answers nginx can give for a scenario, like bench/backend.ts's; undefined when it cannot. */
function staticAnswer(s: BenchScenario): { path: string; method: 'GET' | 'POST'; body: string } | undefined {
  if (s.portico?.mapping !== undefined && s.portico.mapping.length > 0) return undefined;
  const path = s.portico?.path ?? s.path;
  if (path !== s.path) return undefined;
  if (s.method === 'GET' && s.path === '/small') return { path: s.path, method: 'GET', body: jsonOfSize(400) };
  if (s.method === 'GET' && s.path === '/large') return { path: s.path, method: 'GET', body: jsonOfSize(20 * 1024) };
  if (s.method === 'POST' && s.path === '/echo') return { path: s.path, method: 'POST', body: '' };
  return undefined;
}

/** True when nginx can stand in for bench/backend.ts in this scenario. */
export const nginxServes = (s: BenchScenario): boolean => staticAnswer(s) !== undefined;

/**
 * nginx.conf for the scenarios nginx serves: one worker, keep-alive, no logs, bodies from files.
 * Any other path is a 404, or a small 200 with `answerEveryPath` (a table of many routes, each
 * with a path of its own).
 */
export function nginxConf(
  dir: string,
  port: number,
  scenarios: readonly BenchScenario[],
  addresses: readonly string[] = ['127.0.0.1'],
  answerEveryPath = false,
): string {
  const locations: string[] = [];
  const seen = new Set<string>();
  for (const s of scenarios) {
    const a = staticAnswer(s);
    if (a === undefined || seen.has(a.path)) continue;
    seen.add(a.path);
    if (a.method === 'POST') {
      // The body is read (and discarded) before the answer, as bench/backend.ts reads it.
      locations.push(
        `    location = ${a.path} {`,
        '      return 200 \'{"ok":true,"received":$content_length}\';',
        '    }',
      );
      continue;
    }
    const file = join(dir, `${a.path.slice(1)}.json`);
    writeFileSync(file, a.body);
    chmodSync(file, 0o644);
    locations.push(`    location = ${a.path} {`, `      alias ${file};`, '    }');
  }
  return [
    'daemon off;',
    'worker_processes 1;',
    `pid ${join(dir, 'nginx.pid')};`,
    `error_log ${join(dir, 'error.log')} warn;`,
    'events {',
    '  worker_connections 4096;',
    '}',
    'http {',
    '  access_log off;',
    '  server_tokens off;',
    '  default_type application/json;',
    '  etag off;',
    '  if_modified_since off;',
    '  keepalive_timeout 120s;',
    '  keepalive_requests 100000000;',
    '  tcp_nodelay on;',
    '  sendfile on;',
    '  open_file_cache max=64 inactive=600s;',
    '  open_file_cache_valid 600s;',
    `  client_body_temp_path ${join(dir, 'body')};`,
    `  proxy_temp_path ${join(dir, 'proxy')};`,
    `  fastcgi_temp_path ${join(dir, 'fastcgi')};`,
    `  uwsgi_temp_path ${join(dir, 'uwsgi')};`,
    `  scgi_temp_path ${join(dir, 'scgi')};`,
    '  server {',
    ...addresses.map((a) => `    listen ${a}:${port};`),
    ...locations,
    '    location / {',
    answerEveryPath ? '      return 200 \'{"ok":true}\';' : '      return 404 \'{"ok":false}\';',
    '    }',
    '  }',
    '}',
    '',
  ].join('\n');
}

/**
 * Starts nginx serving `scenarios` (those it can) on a free port, pinned to `core`. `pid` is the
 * worker's (the process that serves, whose memory a results row reports) when it can be found.
 */
export async function startNginxBackend(
  binary: string,
  scenarios: readonly BenchScenario[],
  core: number | undefined,
  addresses?: readonly string[],
  answerEveryPath = false,
): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'portico-bench-nginx-'));
  // A worker started by root runs as an unprivileged user: it must be able to read the bodies.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConf(dir, port, scenarios, addresses, answerEveryPath));
  const served = scenarios.find(nginxServes);
  let master: Started;
  try {
    master = await startProcess({
      name: 'nginx backend',
      command: binary,
      args: ['-p', dir, '-e', join(dir, 'error.log'), '-c', conf],
      core,
      ready: { kind: 'health', port, path: served?.method === 'GET' ? served.path : '/small' },
      stdout: 'ignore',
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    name: master.name,
    pid: workerPid(master.pid) ?? master.pid,
    port,
    logged: master.logged,
    stderrTail: master.stderrTail,
    async stop() {
      await master.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The single worker of an nginx master (Linux /proc), or undefined. */
function workerPid(masterPid: number): number | undefined {
  const r = spawnSync('pgrep', ['-P', String(masterPid)], { encoding: 'utf8' });
  const pids = r.stdout.trim().split('\n').filter(Boolean).map(Number);
  return pids.length === 1 ? pids[0] : undefined;
}
