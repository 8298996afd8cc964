import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { loadConfigText } from '../config/load.js';
import { formatProblem } from '../config/problems.js';
import { checkOptions } from './option-problems.js';

/** The first plugin entry of `yaml`'s configuration, located in its text. */
function spec(yaml: string) {
  const loaded = loadConfigText(`${yaml}routes: []\n`, 'g.yaml', {});
  assert.ok(loaded.ok);
  return loaded.config.plugins[0]!;
}

const SCHEMA = z.object({
  header: z.string().default('x-api-key'),
  keys: z.record(z.string(), z.string()),
  limits: z.object({ perMinute: z.int().positive() }).optional(),
  mode: z.enum(['strict', 'lenient']).default('strict'),
});

function problems(yaml: string, schema: z.ZodType | 'none' = SCHEMA): string[] {
  const r = checkOptions(spec(yaml), 0, schema === 'none' ? undefined : schema, 'g.yaml');
  return r.ok ? [] : r.problems.map(formatProblem);
}

describe("a plugin's options, checked against its schema", () => {
  it('parses valid options with their defaults', () => {
    const r = checkOptions(
      spec('plugins:\n  - { name: k, module: ./k.ts, options: { keys: { a: b } } }\n'),
      0,
      SCHEMA,
      'g.yaml',
    );
    assert.deepEqual(r, { ok: true, options: { header: 'x-api-key', keys: { a: 'b' }, mode: 'strict' } });
  });

  it('reports an unknown key at its line with a did-you-mean, once (not also the key as missing)', () => {
    assert.deepEqual(problems('plugins:\n  - name: k\n    module: ./k.ts\n    options:\n      kyes: {}\n'), [
      'g.yaml:5:7: plugins[0].options: unknown key "kyes" (did you mean "keys"?)',
    ]);
  });

  it('reports unknown keys in nested objects, and a z.object that would drop them silently', () => {
    assert.deepEqual(
      problems(
        'plugins:\n  - name: k\n    module: ./k.ts\n    options:\n      keys: {}\n      limits: { perMinut: 5 }\n',
      ),
      ['g.yaml:6:17: plugins[0].options.limits: unknown key "perMinut" (did you mean "perMinute"?)'],
    );
    assert.deepEqual(
      problems('plugins:\n  - name: k\n    module: ./k.ts\n    options:\n      keys: {}\n      limits: {}\n'),
      ['g.yaml:6:15: plugins[0].options.limits.perMinute: required (number)'],
    );
  });

  it('reports a wrong value at its position, and a near enum value', () => {
    assert.deepEqual(problems('plugins:\n  - name: k\n    module: ./k.ts\n    options: { keys: {}, mode: strcit }\n'), [
      'g.yaml:4:32: plugins[0].options.mode: Invalid option: expected one of "strict"|"lenient" (did you mean "strict"?)',
    ]);
  });

  it('takes other keys where the schema says so (z.looseObject)', () => {
    const loose = z.looseObject({ a: z.string().optional() });
    assert.deepEqual(problems('plugins:\n  - { name: k, module: ./k.ts, options: { b: 1 } }\n', loose), []);
  });

  it('refuses options for a plugin that declares none', () => {
    assert.deepEqual(problems('plugins:\n  - { name: k, module: ./k.ts, options: { a: 1 } }\n', 'none'), [
      'g.yaml:2:41: plugins[0].options: plugin "k" takes no options (remove options:)',
    ]);
    assert.deepEqual(problems('plugins:\n  - { name: k, module: ./k.ts }\n', 'none'), []);
  });
});
