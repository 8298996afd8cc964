/**
 * JSON shaping on the bodies of bench/composition.ts, in process: the field filter of the 20 KB
 * records answer (`deny: [passwordHash, address.zip]`, `rename: { name: fullName }`) next to what
 * a hand-written proxy does with it (`JSON.parse`, `delete`, rename, `JSON.stringify`), and
 * `JSON.parse` alone. The CPU the filtered route pays per request beyond a plain one.
 * Standalone: `node --import tsx bench/micro/json-shaping.ts`.
 */
import { compileFieldFilter } from '../../src/mapping/field-filter.js';
import { isMain, measure, runStandalone, type MicroSuite } from './measure.js';

/** The body bench/backend.ts answers on /records (80 user records, ~20 KB). */
export function recordsBody(): string {
  return JSON.stringify(
    Array.from({ length: 80 }, (_, i) => ({
      id: 100000 + i,
      name: `User number ${i}`,
      email: `user${i}@example.test`,
      passwordHash: `$2b$12$${'x'.repeat(53)}`,
      address: { street: `${i} Main Street`, city: 'Porto', zip: `40${String(i).padStart(2, '0')}-123` },
      roles: ['reader', i % 3 === 0 ? 'admin' : 'writer'],
    })),
  );
}

/** The hand-written filter of bench/node-json-shaping.ts. */
export function handFilter(text: string): string {
  const records = JSON.parse(text) as Record<string, unknown>[];
  for (const r of records) {
    delete r.passwordHash;
    const address = r.address as Record<string, unknown> | undefined;
    if (address !== undefined && address !== null && typeof address === 'object') delete address.zip;
    // The obvious rename: the new name goes last (Portico keeps the field's place).
    if ('name' in r) {
      r.fullName = r.name;
      delete r.name;
    }
  }
  return JSON.stringify(records);
}

export const suite: MicroSuite = {
  title: 'JSON shaping: field filter of the 20 KB records body',
  run(budget) {
    const text = recordsBody();
    const filter = compileFieldFilter({ deny: ['passwordHash', 'address.zip'], rename: { name: 'fullName' } })!;
    return [
      measure(`portico field filter (${(text.length / 1024).toFixed(1)} KiB)`, () => filter(text), budget),
      measure('JSON.parse alone', () => JSON.parse(text), budget),
      measure('JSON.parse + delete + rename + JSON.stringify', () => handFilter(text), budget),
    ];
  },
};

if (isMain(import.meta.url)) await runStandalone(suite);
