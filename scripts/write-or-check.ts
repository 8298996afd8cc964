/**
 * The shared end of the generators: write the generated file, or with --check (run by
 * `npm test`) fail when the committed one differs, naming the command that regenerates it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { relative } from 'node:path';

export function writeOrCheck(target: URL, text: string, command: string): void {
  const name = relative(fileURLToPath(new URL('..', import.meta.url)), fileURLToPath(target));
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(target, 'utf8');
    } catch {
      // missing: reported below
    }
    if (current !== text) {
      process.stderr.write(`${name} is out of date: run \`${command}\` and commit it\n`);
      process.exit(1);
    }
  } else {
    writeFileSync(target, text);
    process.stdout.write(`wrote ${name}\n`);
  }
}
