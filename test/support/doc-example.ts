/**
 * A YAML example of a docs page, for a test that runs it: the page's examples are then the tested
 * configuration itself, never a copy that may drift.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DOCS = fileURLToPath(new URL('../../docs/', import.meta.url));

/**
 * The first ```yaml block after the heading `heading` of `docs/<page>`, with every `service`
 * value replaced by `service` (the test's backend).
 */
export function docExample(page: string, heading: string, service: string): string {
  const text = readFileSync(`${DOCS}${page}`, 'utf8');
  const at = text.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`${page}: no heading "${heading}"`);
  const start = text.indexOf('```yaml\n', at);
  const end = text.indexOf('\n```', start + 8);
  if (start < 0 || end < 0) throw new Error(`${page}: no yaml block after "${heading}"`);
  return text.slice(start + 8, end + 1).replace(/^(\s*service: ).*$/gm, `$1${service}`);
}
