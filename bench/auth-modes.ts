/**
 * Requests/s of one route in each auth mode, in one run: public, local HS256 (secret),
 * and delegated (auth service), plus the backend called directly for context.
 *
 *   node --import tsx bench/auth-modes.ts [--rounds 3] [--duration 3] [--connections 32]
 *
 * The cases are measured in interleaved rounds (public, local, delegated, public, ...) of
 * `--duration` seconds, and the median round is reported, so load that comes and goes on a shared
 * machine hits every case alike (3 x 3 s = 9 s per case by default).
 * Everything runs on this machine: the backend and the auth service in one child process, each
 * gateway in its own child process started with the real CLI (`portico start`), and autocannon
 * (CLI, JSON output) as the load generator. The auth service verifies the same HS256 token with
 * jose and answers its claims, so "delegated" pays for a real validation plus one HTTP hop.
 * Other work on the machine shifts the absolute numbers: compare the ratios.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { autocannon, firstLine, freePort, startGateway, waitHealthy, type CannonResult } from './lib/child-gateway.js';
import { jwtVerify, SignJWT } from 'jose';

const SECRET = 'bench-secret-0123456789abcdef0123456789abcdef';
const key = new TextEncoder().encode(SECRET);
const root = fileURLToPath(new URL('..', import.meta.url));

if (process.argv.includes('--servers')) await runServers();
else await main();

/** Child mode: the backend and the auth service; prints their ports as one JSON line. */
async function runServers(): Promise<void> {
  const body = JSON.stringify({ id: 1, name: 'Slide rule', price: 19.9 });
  const backend = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  const auth = createServer((req, res) => {
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const answer = (status: number, text: string) => {
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (token === undefined) return answer(401, '{"error":"Missing token","success":false}');
    jwtVerify(token, key, { algorithms: ['HS256'] }).then(
      ({ payload }) =>
        answer(200, JSON.stringify({ userId: payload.sub, username: payload.username, role: payload.role })),
      () => answer(401, '{"error":"Invalid token","success":false}'),
    );
  });
  const listen = (s: ReturnType<typeof createServer>) =>
    new Promise<number>((r) => s.listen(0, '127.0.0.1', () => r((s.address() as AddressInfo).port)));
  process.stdout.write(`${JSON.stringify({ backend: await listen(backend), auth: await listen(auth) })}\n`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      duration: { type: 'string', default: '3' },
      connections: { type: 'string', default: '32' },
    },
  });
  const rounds = Number(values.rounds);
  const duration = Number(values.duration);
  const connections = Number(values.connections);
  const children: ChildProcess[] = [];
  const stopAll = () => children.forEach((c) => c.kill('SIGTERM'));
  process.on('exit', stopAll);
  try {
    const servers = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--servers'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(servers);
    const ports = JSON.parse(await firstLine(servers)) as { backend: number; auth: number };

    const dir = mkdtempSync(join(tmpdir(), 'portico-bench-'));
    const routes = `
routes:
  - { method: GET, route: /public, service: "127.0.0.1:${ports.backend}", path: /products/1, public: true }
  - { method: GET, route: /protected, service: "127.0.0.1:${ports.backend}", path: /products/1 }`;
    const localYaml = join(dir, 'local.yaml');
    writeFileSync(localYaml, `${routes}\nconfig:\n  auth: { defaultProtected: true, secret: "${SECRET}" }\n`);
    const delegatedYaml = join(dir, 'delegated.yaml');
    writeFileSync(
      delegatedYaml,
      `${routes}\nconfig:\n  auth: { defaultProtected: true, authService: "127.0.0.1:${ports.auth}", authPath: /auth/validate }\n`,
    );

    const localPort = await freePort();
    const delegatedPort = await freePort();
    children.push(startGateway(localYaml, localPort), startGateway(delegatedYaml, delegatedPort));
    await Promise.all([waitHealthy(localPort, 20_000), waitHealthy(delegatedPort, 20_000)]);

    const token = await new SignJWT({ username: 'ada', role: 'admin' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('1')
      .setExpirationTime('1h')
      .sign(key);
    const auth = [`authorization=Bearer ${token}`];
    const cases = [
      { name: 'backend direct (no gateway)', url: `http://127.0.0.1:${ports.backend}/products/1`, headers: [] },
      { name: 'public route', url: `http://127.0.0.1:${localPort}/api/public`, headers: [] },
      { name: 'protected, local HS256', url: `http://127.0.0.1:${localPort}/api/protected`, headers: auth },
      { name: 'protected, delegated', url: `http://127.0.0.1:${delegatedPort}/api/protected`, headers: auth },
    ];
    // A short warm-up per case so JIT and connection pools are hot before measuring.
    for (const c of cases) await autocannon(c.url, c.headers, connections, 2);
    const samples = new Map<string, CannonResult[]>(cases.map((c) => [c.name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const c of cases) samples.get(c.name)!.push(await autocannon(c.url, c.headers, connections, duration));
    }
    const rows = cases.map((c) => {
      const runs = samples.get(c.name)!;
      const median = [...runs].sort((a, b) => a.requests.average - b.requests.average)[Math.floor(runs.length / 2)]!;
      return {
        name: c.name,
        rps: median.requests.average,
        p50: median.latency.p50,
        p99: median.latency.p99,
        all: runs.map((r) => Math.round(r.requests.average)),
        bad: runs.reduce((n, r) => n + r.non2xx + r.errors, 0),
      };
    });
    const base = rows.find((r) => r.name === 'public route')!.rps;
    process.stdout.write(
      `\nNode ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}); ${connections} connections; ${rounds} interleaved rounds of ${duration} s per case; median round\n\n`,
    );
    process.stdout.write(
      '| case | req/s | vs public | p50 ms | p99 ms | rounds (req/s) | non-2xx/errors |\n|---|---:|---:|---:|---:|---|---:|\n',
    );
    for (const r of rows)
      process.stdout.write(
        `| ${r.name} | ${Math.round(r.rps)} | ${(r.rps / base).toFixed(2)} | ${r.p50} | ${r.p99} | ${r.all.join(', ')} | ${r.bad} |\n`,
      );
  } finally {
    stopAll();
  }
}
