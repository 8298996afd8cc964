/**
 * Requests/s of one route with OAuth2 token introspection (config.auth.introspection), warm
 * cache, next to the public route, the same route with a local HS256 token and the delegated
 * auth service, in one run; then the cold check: N new tokens, each sent by C concurrent
 * requests at once, and how many introspection calls the endpoint got per token (1 is the goal).
 *
 *   node --import tsx bench/introspection.ts [--rounds 3] [--duration 3] [--connections 32]
 *                                            [--cold-tokens 20] [--cold-concurrency 100]
 *
 * The cases are measured in interleaved rounds (public, HS256, introspection, delegated,
 * public, ...) of `--duration` seconds and the median round is reported, so load that comes
 * and goes on a shared machine hits every case alike. Everything runs on this machine: the
 * backend, the auth service and the introspection endpoint in one child process, each gateway in
 * its own child process started with the real CLI (`portico start`), autocannon (CLI, JSON output)
 * as the load generator. The auth service and the introspection endpoint both verify the same
 * HS256 token with jose, so the delegated and cold introspection paths pay for a real
 * validation plus one HTTP hop; a warm introspection pays for neither. Compare the ratios.
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
const CLIENT_ID = 'portico-bench';
const CLIENT_SECRET = 'bench-client-secret-0123456789';
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
  // RFC 7662: POST token=...; the client credentials are checked as an authorization server would.
  const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
  let calls = 0;
  const introspection = createServer((req, res) => {
    const answer = (status: number, text: string) => {
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (req.method === 'GET' && req.url === '/calls') return answer(200, JSON.stringify({ calls }));
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.headers.authorization !== basic) return answer(401, '{"error":"invalid_client"}');
      calls++;
      const token = new URLSearchParams(Buffer.concat(chunks).toString()).get('token') ?? '';
      jwtVerify(token, key, { algorithms: ['HS256'] }).then(
        ({ payload }) =>
          answer(
            200,
            JSON.stringify({
              active: true,
              sub: payload.sub,
              username: payload.username,
              role: payload.role,
              scope: 'products:read',
              client_id: 'bench',
              exp: payload.exp,
            }),
          ),
        () => answer(200, '{"active":false}'),
      );
    });
  });
  const listen = (s: ReturnType<typeof createServer>) =>
    new Promise<number>((r) => s.listen(0, '127.0.0.1', () => r((s.address() as AddressInfo).port)));
  process.stdout.write(
    `${JSON.stringify({ backend: await listen(backend), auth: await listen(auth), introspection: await listen(introspection) })}\n`,
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      duration: { type: 'string', default: '3' },
      connections: { type: 'string', default: '32' },
      'cold-tokens': { type: 'string', default: '20' },
      'cold-concurrency': { type: 'string', default: '100' },
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
    const ports = JSON.parse(await firstLine(servers)) as { backend: number; auth: number; introspection: number };

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

    const introspectionYaml = join(dir, 'introspection.yaml');
    writeFileSync(
      introspectionYaml,
      `${routes}\nconfig:\n  auth:\n    defaultProtected: true\n    introspection: { url: "http://127.0.0.1:${ports.introspection}/introspect", clientId: ${CLIENT_ID}, clientSecret: ${CLIENT_SECRET} }\n`,
    );

    const localPort = await freePort();
    const delegatedPort = await freePort();
    const introspectionPort = await freePort();
    children.push(
      startGateway(localYaml, localPort),
      startGateway(delegatedYaml, delegatedPort),
      startGateway(introspectionYaml, introspectionPort),
    );
    await Promise.all([waitHealthy(localPort), waitHealthy(delegatedPort), waitHealthy(introspectionPort)]);

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
      {
        name: 'protected, introspection (warm)',
        url: `http://127.0.0.1:${introspectionPort}/api/protected`,
        headers: auth,
      },
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
    const jwt = rows.find((r) => r.name === 'protected, local HS256')!.rps;
    const warm = rows.find((r) => r.name === 'protected, introspection (warm)')!.rps;
    process.stdout.write(`\nintrospection (warm) / local HS256: ${(warm / jwt).toFixed(2)}x (goal >= 0.90x)\n`);

    const cold = await coldCheck(
      `http://127.0.0.1:${introspectionPort}/api/protected`,
      `http://127.0.0.1:${ports.introspection}/calls`,
      Number(values['cold-tokens']),
      Number(values['cold-concurrency']),
    );
    process.stdout.write(
      `cold: ${cold.tokens} new tokens x ${cold.concurrency} concurrent requests each: ${cold.calls} introspection calls (${(cold.calls / cold.tokens).toFixed(2)} per token, goal 1.00), ${cold.ok} of ${cold.requests} answered 200\n`,
    );
  } finally {
    stopAll();
  }
}

/**
 * Sends `concurrency` requests at once with each of `tokens` tokens never seen before (one token
 * after the other) and counts the introspection calls they caused.
 */
async function coldCheck(url: string, callsUrl: string, tokens: number, concurrency: number) {
  const callsNow = async () => ((await (await fetch(callsUrl)).json()) as { calls: number }).calls;
  const before = await callsNow();
  let ok = 0;
  for (let i = 0; i < tokens; i++) {
    const token = await new SignJWT({ username: `cold-${i}`, role: 'user' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(`cold-${i}`)
      .setJti(`${process.pid}-${Date.now()}-${i}`)
      .setExpirationTime('1h')
      .sign(key);
    const statuses = await Promise.all(
      Array.from({ length: concurrency }, () =>
        fetch(url, { headers: { authorization: `Bearer ${token}` } }).then(
          async (r) => (await r.arrayBuffer(), r.status),
        ),
      ),
    );
    ok += statuses.filter((s) => s === 200).length;
  }
  return { tokens, concurrency, calls: (await callsNow()) - before, ok, requests: tokens * concurrency };
}
