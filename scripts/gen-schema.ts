/**
 * Writes schema/portico.schema.json from the zod schema (`npm run schema`); with --check, fails
 * when the committed file is out of date (run by `npm test`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { GatewayFileSchema } from '../src/config/schema.js';

const target = new URL('../schema/portico.schema.json', import.meta.url);
const schema = {
  ...z.toJSONSchema(GatewayFileSchema, { io: 'input', target: 'draft-7' }),
  title: 'Portico gateway configuration',
};
const text = `${JSON.stringify(schema, null, 2)}\n`;
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // missing: reported below
  }
  if (current !== text) {
    process.stderr.write('schema/portico.schema.json is out of date: run `npm run schema` and commit it\n');
    process.exit(1);
  }
} else {
  writeFileSync(target, text);
  process.stdout.write('wrote schema/portico.schema.json\n');
}
