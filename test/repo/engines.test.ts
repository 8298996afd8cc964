/**
 * `npm ci` prints an EBADENGINE warning for each installed package whose `engines.node` excludes
 * the running Node. Portico supports every Node from the floor in package.json's `engines`, so
 * every package in the lock file, development ones included, must accept the floor and the Node
 * running this test (`npm run test:node-versions` runs it on 22 and 24 too).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const ROOT = new URL('../../', import.meta.url);
const json = (file: string) => JSON.parse(readFileSync(new URL(file, ROOT), 'utf8')) as Record<string, unknown>;

type Version = readonly [number, number, number];

/** The numeric parts of a version or partial version (`20`, `20.x`, `20.18.1`, `*`). */
const partsOf = (text: string): number[] => {
  const parts: number[] = [];
  for (const p of text.replace(/^v/, '').split('.')) {
    if (!/^\d+$/.test(p)) break;
    parts.push(Number(p));
  }
  return parts;
};

/** -1, 0 or 1 comparing the first `parts.length` parts of `v` with `parts`. */
const compare = (v: Version, parts: readonly number[]): number => {
  for (let i = 0; i < parts.length; i++) if (v[i] !== parts[i]) return v[i]! < parts[i]! ? -1 : 1;
  return 0;
};

/** One comparator of a semver range: `>=20.9.0`, `^20.12`, `~1.2`, `20`, `*`. */
function comparatorHolds(v: Version, comparator: string): boolean {
  const [, op = '', rest = ''] = /^(>=|<=|>|<|=|\^|~)?(.*)$/.exec(comparator)!;
  const parts = partsOf(rest);
  if (parts.length === 0) return true;
  const c = compare(v, parts);
  if (op === '>=') return c >= 0;
  if (op === '>') return c > 0;
  if (op === '<=') return c <= 0;
  if (op === '<') return c < 0;
  if (op === '' || op === '=') return c === 0;
  if (c < 0) return false;
  // ^ keeps the first non-zero part given; ~ keeps major and minor (or the major alone).
  const keep =
    op === '^' ? Math.max(1, parts.findIndex((p) => p !== 0) + 1 || parts.length) : Math.min(2, parts.length);
  return compare(v, parts.slice(0, keep)) === 0;
}

/** Whether `version` satisfies the semver range `range` (the forms package engines use). */
export function satisfies(version: string, range: string): boolean {
  const [a = 0, b = 0, c = 0] = partsOf(version);
  const v: Version = [a, b, c];
  return range.split('||').some((set) =>
    set
      .trim()
      .replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1')
      .split(/\s+/)
      .every((comparator) => comparatorHolds(v, comparator)),
  );
}

describe('the Node versions Portico supports', () => {
  it('reads the ranges packages write for engines', () => {
    const cases: [string, string, boolean][] = [
      ['20.18.1', '>=20.18.1', true],
      ['20.18.0', '>=20.18.1', false],
      ['20.18.1', '>=22', false],
      ['20.18.1', '^20.19.0 || ^22.13.0 || >=24', false],
      ['20.18.1', '^18.18.0 || ^20.9.0 || >=21.1.0', true],
      ['22.1.0', '^20.12||^22.13||>=24.0', false],
      ['20.18.1', '20 || >=22', true],
      ['21.0.0', '20 || >=22', false],
      ['20.18.1', '>= 10.x', true],
      ['20.18.1', '10.* || >= 12.*', true],
      ['20.18.1', '*', true],
      ['20.18.1', '>=9.4.0 || ^8.9.4', true],
      ['0.5.0', '^0.4.0', false],
      ['1.3.0', '~1.2', false],
    ];
    for (const [version, range, expected] of cases)
      assert.equal(satisfies(version, range), expected, `${version} ${range}`);
  });

  it('every package in package-lock.json accepts the engines floor and this Node (no EBADENGINE from npm ci)', () => {
    const floor = /^>=\s*(\d+\.\d+\.\d+)$/.exec(String((json('package.json').engines as { node: string }).node))?.[1];
    assert.ok(floor, 'package.json engines.node is ">=X.Y.Z"');
    const packages = json('package-lock.json').packages as Record<string, { version?: string; engines?: unknown }>;
    const refused: string[] = [];
    for (const [path, pkg] of Object.entries(packages)) {
      const engines = pkg.engines as { node?: unknown } | undefined;
      const range = typeof engines?.node === 'string' ? engines.node : undefined;
      if (range === undefined) continue;
      for (const node of [floor, process.versions.node])
        if (!satisfies(node, range)) refused.push(`${path || 'portico'}@${pkg.version}: node ${range} refuses ${node}`);
    }
    assert.deepEqual(refused, []);
  });
});
