/**
 * Preloaded into a CLI process by a test (`--import .../report-usage.mjs`): at exit, the process's
 * own CPU time and peak memory on stderr, as its last line:
 * `portico-usage {"cpuMs":...,"maxRssMb":...}`.
 */
import process from 'node:process';

process.on('exit', () => {
  const u = process.resourceUsage();
  const usage = { cpuMs: Math.round((u.userCPUTime + u.systemCPUTime) / 1000), maxRssMb: Math.round(u.maxRSS / 1024) };
  process.stderr.write(`\nportico-usage ${JSON.stringify(usage)}\n`);
});
