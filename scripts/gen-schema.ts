/**
 * Writes schema/portico.schema.json from the zod schema (`npm run schema`); with --check, fails
 * when the committed file is out of date (run by `npm test`).
 */
import { z } from 'zod';
import { GatewayFileSchema } from '../src/config/schema.js';
import { writeOrCheck } from './write-or-check.js';

const target = new URL('../schema/portico.schema.json', import.meta.url);
const schema = {
  ...z.toJSONSchema(GatewayFileSchema, { io: 'input', target: 'draft-7' }),
  title: 'Portico gateway configuration',
};
const text = `${JSON.stringify(schema, null, 2)}\n`;
writeOrCheck(target, text, 'npm run schema');
