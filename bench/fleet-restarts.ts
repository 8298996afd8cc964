/**
 * Rolling restarts behind nginx, measured as teams run them (docs/deploy.md "Rolling restarts"):
 * two `portico start` replicas behind nginx (upstream with both, keep-alive to them, default
 * `proxy_next_upstream`), GET and POST clients on keep-alive connections, and N rolling restarts
 * (SIGTERM one replica, start it again once it exited, then the next). Prints the failed requests
 * of each kind, and with --out appends a section to a results file.
 *
 *   node --import tsx bench/fleet-restarts.ts [--delay 0] [--restarts 10] [--gets 25] [--posts 25]
 *     [--params "max_fails=0"] [--pause SEC] [--cli OTHER_CHECKOUT/src/cli/main.ts] [--out FILE.md]
 *
 * `--pause` waits after a restarted replica is ready before stopping the next: with nginx's
 * default `max_fails=1 fail_timeout=10s`, a replica refused once is not tried again for 10 s, and
 * stopping the other one meanwhile leaves nginx with "no live upstreams".
 *
 * Not part of `npm test` (test/integration/fleet-rolling-restart.test.ts is its short version).
 * The replicas run through tsx, as the fleet test does; `--cli` runs another checkout's CLI (the
 * code before a change) under the same load.
 */
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startBackend, json } from '../test/support/backend.js';
import { freePort } from '../test/support/redis.js';
import { Replica, rollingRestarts, startFleetNginx, startHttpLoad } from '../test/support/fleet.js';

const { values } = parseArgs({
  options: {
    delay: { type: 'string', default: '0' },
    restarts: { type: 'string', default: '10' },
    gets: { type: 'string', default: '25' },
    posts: { type: 'string', default: '25' },
    params: { type: 'string', default: '' },
    pause: { type: 'string', default: '0' },
    cli: { type: 'string' },
    out: { type: 'string' },
  },
});

const delay = Number(values.delay);
const backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
const file = join(mkdtempSync(join(tmpdir(), 'portico-fleet-bench-')), 'gateway.yaml');
writeFileSync(
  file,
  `${delay > 0 ? `config: { shutdown: { drainDelaySec: ${delay} } }` : ''}
routes:
  - { method: GET, route: /items, service: ${backend.host}, path: /items }
  - { method: POST, route: /orders, service: ${backend.host}, path: /orders }
`,
);
const replicas = [
  new Replica(await freePort(), file, {}, values.cli),
  new Replica(await freePort(), file, {}, values.cli),
];
await Promise.all(replicas.map((r) => r.start()));
const nginx = await startFleetNginx(
  replicas.map((r) => r.port),
  { serverParams: values.params },
);
const load = startHttpLoad(nginx.url, Number(values.gets), Number(values.posts));
const started = performance.now();
let stops: number[] = [];
let errors = '';
try {
  stops = await rollingRestarts(replicas, Number(values.restarts), Number(values.pause) * 1000);
} finally {
  await load.stop();
  errors = nginx.errors();
  for (const r of replicas) await r.stop('SIGTERM');
  await nginx.stop().catch(() => {});
  await backend.close();
}
const seconds = (performance.now() - started) / 1000;
const kinds = new Map<string, number>();
for (const line of errors.split('\n')) {
  const m = /\[error\] \S+ \*\d+ (.+?) while/.exec(line);
  if (m?.[1] !== undefined && !/Connection refused/.test(m[1])) kinds.set(m[1], (kinds.get(m[1]) ?? 0) + 1);
}
const row = [
  values.cli === undefined ? 'this checkout' : values.cli,
  delay,
  values.params === '' ? 'defaults' : values.params,
  `${values.restarts}${values.pause === '0' ? '' : `, ${values.pause} s apart`}`,
  `${values.gets} + ${values.posts}`,
  Math.round(seconds),
  `${load.get.failed} / ${load.get.ok + load.get.failed}`,
  `${load.post.failed} / ${load.post.ok + load.post.failed}`,
  Math.round(Math.max(...stops)),
  [...kinds].map(([k, n]) => `${n}x ${k}`).join('; ') || '-',
];
const line = `| ${row.join(' | ')} |`;
console.log(line);
if (values.out !== undefined) appendFileSync(values.out, line + '\n');
