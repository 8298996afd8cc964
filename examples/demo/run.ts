/**
 * `npm start`: the demo backends in this process, the gateway as `portico start` in a child
 * process (exactly as a user runs it), both stopped together.
 */
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { DEMO_PORTS, startDemoBackends, type DemoService } from './backends.js';

// PORT=0 puts the whole demo on free ports (tests, a busy machine): the backends take free
// ports too, and the gateway finds them through gateway.yaml's ${..._SERVICE} variables.
const ephemeral = process.env.PORT === '0';
const ports = ephemeral
  ? (Object.fromEntries(Object.keys(DEMO_PORTS).map((name) => [name, 0])) as Record<DemoService, number>)
  : DEMO_PORTS;
const root = fileURLToPath(new URL('../../../', import.meta.url));
const backends = await startDemoBackends(ports);
const env = { ...process.env };
if (ephemeral)
  for (const [name, server] of Object.entries(backends))
    env[`${name.toUpperCase()}_SERVICE`] = `127.0.0.1:${(server.address() as AddressInfo).port}`;
// Its own process group: a terminal's Ctrl-C reaches the gateway only through this process,
// once, rather than also directly (two would read as "stop now" instead of "drain").
const gateway = spawn(
  process.execPath,
  [`${root}dist/src/cli/main.js`, 'start', '--config', `${root}examples/demo/gateway.yaml`, ...process.argv.slice(2)],
  {
    stdio: 'inherit',
    env,
    detached: true,
  },
);
process.stdout.write(
  `\nPortico demo: try  curl localhost:${ephemeral ? '<port>' : process.env.PORT || '8080'}/api/posts  (Ctrl-C stops)\n\n`,
);

// A Ctrl-C in a terminal reaches this process twice (from the terminal, and from npm passing it
// on); a repeat within this window is that same Ctrl-C, a later one is the operator's second.
const REPEAT_WINDOW_MS = 1_000;
let firstSignalAt: number | undefined;
const stop = (signal: NodeJS.Signals) => {
  const now = Date.now();
  if (firstSignalAt !== undefined && now - firstSignalAt < REPEAT_WINDOW_MS) return;
  firstSignalAt ??= now;
  gateway.kill(signal);
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
// A closed terminal ends the demo as Ctrl-C does (the gateway would otherwise outlive it).
process.on('SIGHUP', () => stop('SIGTERM'));
gateway.on('exit', (code) => {
  for (const b of Object.values(backends)) b.close();
  process.exit(code ?? 0);
});
