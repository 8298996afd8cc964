/** The version in Portico's own package.json, for `portico --version` and the status page. */
import { existsSync, readFileSync } from 'node:fs';

/** Portico's version, or `unknown` when its package.json cannot be found. */
export function packageVersion(): string {
  // src/ops/ in a checkout (two levels down), dist/src/ops/ when built or installed (three); the
  // nearer one first, so that a checkout never reads a package.json above it.
  const file = ['../../package.json', '../../../package.json']
    .map((p) => new URL(p, import.meta.url))
    .find((u) => existsSync(u));
  if (file === undefined) return 'unknown';
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
