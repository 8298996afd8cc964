import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readConsumersFile } from './consumers-file.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-consumers-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const hash = (i: number) => `sha256:${i.toString(16).padStart(64, '0')}`;
const consumers = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `c${i}`, keys: [hash(i), hash(n + i)], claims: { tier: 'gold' } }));

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** Line and column of the first `needle` in `text`. */
function positionOf(text: string, needle: string): { line: number; col: number } {
  const lines = text.slice(0, text.indexOf(needle)).split('\n');
  return { line: lines.length, col: lines.at(-1)!.length + 1 };
}

describe('readConsumersFile, JSON', () => {
  it('reports a bad hash in the last consumer of a large file at its FILE:LINE:COL', () => {
    const list = consumers(20_000);
    const bad = hash(39_999).slice(0, -1);
    list[19_999]!.keys[1] = bad;
    const text = JSON.stringify({ consumers: list }, null, 1);
    const file = write('large.json', text);
    const read = readConsumersFile(file, {});
    assert.equal(read.ok, false);
    const problems = read.ok ? [] : read.problems;
    assert.equal(problems.length, 1);
    assert.deepEqual(
      { file: problems[0]!.file, line: problems[0]!.line, col: problems[0]!.col },
      {
        file,
        ...positionOf(text, `"${bad}"`),
      },
    );
    assert.match(problems[0]!.message, /sha256/);
  });

  it('locates every problem where the YAML parser locates it in the same text', () => {
    const list: unknown[] = consumers(4);
    list[1] = { id: 'c1', keys: ['sha256:nothex'], claims: {}, colour: 'blue' };
    list[2] = { keys: [hash(2)] };
    list[3] = { id: 'c0', keys: [hash(0)] };
    const text = JSON.stringify({ consumers: list }, null, 2);
    const fromJson = readConsumersFile(write('mixed.json', text), {});
    const fromYaml = readConsumersFile(write('mixed.yaml', text), {});
    assert.equal(fromJson.ok, false);
    assert.equal(fromYaml.ok, false);
    const strip = (r: typeof fromJson) => (r.ok ? [] : r.problems.map(({ file: _file, ...rest }) => rest));
    assert.ok(strip(fromJson).length >= 4, JSON.stringify(strip(fromJson)));
    assert.deepEqual(strip(fromJson), strip(fromYaml));
  });

  it('reports a syntax error at its line and column', () => {
    const text = '{\n  "consumers": [\n    {"id": "a", "keys": []}\n    {"id": "b"}\n  ]\n}\n';
    const read = readConsumersFile(write('syntax.json', text), {});
    assert.equal(read.ok, false);
    const problem = read.ok ? undefined : read.problems[0];
    assert.deepEqual({ line: problem?.line, col: problem?.col }, { line: 4, col: 5 });
    assert.match(problem?.message ?? '', /^JSON: /);
  });

  it('reads a valid file', () => {
    const read = readConsumersFile(write('valid.json', JSON.stringify({ consumers: consumers(3) })), {});
    assert.ok(read.ok);
    assert.deepEqual(
      read.consumers.map((c) => c.id),
      ['c0', 'c1', 'c2'],
    );
  });
});
