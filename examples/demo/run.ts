/**
 * `npm start`: the demo backends in this process, the gateway as `portico start` in a child
 * process (exactly as a user runs it), both stopped together.
 */
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { DEMO_PORTS, startDemoBackends, type DemoService } from './backends.js';

// The backends take free ports, so a busy machine never stops the demo; DEMO_BASE_PORT=9101 puts
// them on fixed ones (base, base+1...) in DEMO_PORTS order. The gateway finds them through
// gateway.yaml's ${..._SERVICE} variables. PORT moves the gateway (PORT=0: a free port too).
const base = process.env.DEMO_BASE_PORT;
const names = Object.keys(DEMO_PORTS) as DemoService[];
if (base !== undefined && !/^\d{1,5}$/.test(base)) fail(`DEMO_BASE_PORT=${base}: expected a port number`);
const ports = Object.fromEntries(names.map((name, i) => [name, base === undefined ? 0 : Number(base) + i])) as Record<
  DemoService,
  number
>;
const root = fileURLToPath(new URL('../../../', import.meta.url));
const backends = await startDemoBackends(ports).catch((err: NodeJS.ErrnoException) => {
  if (err.code !== 'EADDRINUSE') throw err;
  return fail(
    `port ${(err as { port?: number }).port} is busy: choose another DEMO_BASE_PORT, or unset it for free ports`,
  );
});
const env = { ...process.env };
const where: string[] = [];
for (const name of names) {
  const address = `127.0.0.1:${(backends[name].address() as AddressInfo).port}`;
  env[`${name.toUpperCase()}_SERVICE`] = address;
  where.push(`  ${name.padEnd(9)} ${address}`);
}
process.stdout.write(`Portico demo backends:\n${where.join('\n')}\n`);

/** One line on stderr and exit 1: a user mistake, not a crash. */
function fail(message: string): never {
  process.stderr.write(`portico demo: ${message}\n`);
  process.exit(1);
}

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
  `\nPortico demo: try  curl localhost:${process.env.PORT === '0' ? '<port>' : process.env.PORT || '8080'}/api/posts  (Ctrl-C stops)\n\n`,
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
