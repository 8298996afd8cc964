/**
 * Configuration fuzzing: valid files mangled the way people and attackers mangle them (lines
 * deleted, duplicated or re-indented, characters swapped, aliases, huge numbers, deep nesting).
 * Property: parse + validate never throws, answers within its time budget, and every problem
 * it returns is located (file, line and column inside the text).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { parseConfigText } from './parse.js';
import { validateConfig } from './validate.js';

const SEEDS = [
  readFileSync(new URL('../../test/fixtures/check/valid.yaml', import.meta.url), 'utf8'),
  readFileSync(new URL('../../test/fixtures/check/unknown-keys.yaml', import.meta.url), 'utf8'),
  `routes:
  - method: GET
    route: /posts/{id}
    service: localhost:3000
    path: /posts/{id}
    mapping:
      - { path: "/users/{authorId}", service: "localhost:3001", tag: author }
config:
  auth: { defaultProtected: true, secret: \${JWT_SECRET} }
  circuitBreaker:
    enabled: true
    timeoutSec: 10
  cors:
    origins: ["https://app.example.com"]
`,
];

/** Budget of one parse + validate; the hostile inputs below must stay far under it. */
const BUDGET_MS = 2_000;

type Mutation = (lines: string[]) => string[];

const index = (lines: string[], n: number) => n % Math.max(1, lines.length);

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.nat().map(
    (n): Mutation =>
      (l) =>
        l.filter((_, i) => i !== index(l, n)),
  ),
  fc.nat().map(
    (n): Mutation =>
      (l) =>
        l.flatMap((x, i) => (i === index(l, n) ? [x, x] : [x])),
  ),
  fc.tuple(fc.nat(), fc.integer({ min: -4, max: 4 })).map(
    ([n, d]): Mutation =>
      (l) =>
        l.map((x, i) =>
          i !== index(l, n) ? x : d >= 0 ? ' '.repeat(d) + x : x.replace(new RegExp(`^ {0,${-d}}`), ''),
        ),
  ),
  fc.tuple(fc.nat(), fc.nat()).map(
    ([n, c]): Mutation =>
      (l) =>
        l.map((x, i) => {
          if (i !== index(l, n) || x.length < 2) return x;
          const k = c % (x.length - 1);
          return x.slice(0, k) + x[k + 1]! + x[k]! + x.slice(k + 2);
        }),
  ),
  fc.tuple(fc.nat(), fc.constantFrom('&a', '*a', '*nope', '<<: *a', '&a [*a, *a, *a]', '!!binary', '? [x]')).map(
    ([n, s]): Mutation =>
      (l) =>
        l.map((x, i) => (i === index(l, n) ? `${x} ${s}` : x)),
  ),
  fc
    .tuple(fc.nat(), fc.constantFrom('1e400', '-0', '99999999999999999999999', '0x7fffffff', '.nan', '-.inf', '1_000'))
    .map(
      ([n, num]): Mutation =>
        (l) =>
          l.map((x, i) => (i === index(l, n) ? x.replace(/: .*$/, `: ${num}`) : x)),
    ),
  fc.tuple(fc.nat(), fc.integer({ min: 50, max: 5_000 }), fc.constantFrom('[', '{', '- ', '[{a: ')).map(
    ([n, depth, open]): Mutation =>
      (l) =>
        l.map((x, i) => (i === index(l, n) ? `${x} ${open.repeat(depth)}` : x)),
  ),
  fc.integer({ min: 10, max: 12 }).map((levels): Mutation => (l) => {
    const bomb = ['x-bomb:', '  a0: &a0 [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < levels; i++)
      bomb.push(
        `  a${i}: &a${i} [${Array(9)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    return [...bomb, ...l];
  }),
  fc.nat().map(
    (n): Mutation =>
      (l) =>
        l.map((x, i) => (i === index(l, n) ? x.replace(/-/, '') : x)),
  ),
);

function check(text: string): void {
  const started = performance.now();
  let problems;
  try {
    const parsed = parseConfigText(text, 'fuzz.yaml', { JWT_SECRET: 'a-secret-of-at-least-thirty-two-bytes' });
    const v = validateConfig(parsed);
    problems = v.ok ? v.notices : v.problems;
  } catch (err) {
    assert.fail(`threw ${(err as Error).stack ?? String(err)}\n--- input ---\n${text.slice(0, 2_000)}`);
  }
  const elapsed = performance.now() - started;
  assert.ok(elapsed < BUDGET_MS, `took ${elapsed.toFixed(0)} ms`);
  const lines = text.split('\n');
  for (const p of problems) {
    assert.equal(p.file, 'fuzz.yaml');
    assert.ok(Number.isInteger(p.line) && p.line >= 1 && p.line <= lines.length + 1, `line ${p.line}: ${p.message}`);
    assert.ok(Number.isInteger(p.col) && p.col >= 1, `col ${p.col}: ${p.message}`);
    assert.ok(p.message.length > 0 && !p.message.includes('\n'), p.message);
  }
}

describe('config fuzzing: parse + validate on mangled files', () => {
  it('never throws, stays in budget, and locates every problem', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SEEDS), fc.array(mutation, { minLength: 1, maxLength: 4 }), (seed, mutations) => {
        check(mutations.reduce((lines, m) => m(lines), seed.split('\n')).join('\n'));
      }),
      { numRuns: 300, seed: 20_261_123 },
    );
  });

  it('random bytes and random YAML-ish text never throw', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'ab: -[]{}&*!|>\'"#\n ,?%@`\t0'.split('')), maxLength: 400 }),
        (text) => check(text),
      ),
      { numRuns: 300, seed: 7 },
    );
  });
});
