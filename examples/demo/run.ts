/**
 * `npm start`: the demo backends in this process, the gateway as `portico start` in a child
 * process (exactly as a user runs it), both stopped together.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startDemoBackends } from './backends.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const backends = await startDemoBackends();
const gateway = spawn(process.execPath, [`${root}dist/src/cli/main.js`, 'start', '--config', `${root}examples/demo/gateway.yaml`, ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: process.env,
});
process.stdout.write('\nPortico demo: try  curl localhost:8080/api/posts  (Ctrl-C stops)\n\n');

const stop = (signal: NodeJS.Signals) => {
  gateway.kill(signal);
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
gateway.on('exit', (code) => {
  for (const b of Object.values(backends)) b.close();
  process.exit(code ?? 0);
});
