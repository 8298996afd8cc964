/**
 * Source comments (src/, test/, bench/) must make sense to someone who has only this repository: they state the rule
 * itself, or point to a page under docs/ or an RFC, never to a document or tracker entry a reader
 * cannot open. Only comments are scanned (found with the TypeScript parser), so strings and code
 * are never flagged.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** References to documents outside the repository; none of these reads as ordinary prose. */
const FORBIDDEN: readonly RegExp[] = [/DECISIONS\.md/, /STYLE\.md/, /\bspec \d/i, /\bissue #?\d+/i];

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** Every comment of a file, with its start offset; each range is reported once. */
function comments(text: string): { pos: number; text: string }[] {
  const source = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const seen = new Map<number, string>();
  const collect = (ranges: ts.CommentRange[] | undefined): void => {
    for (const r of ranges ?? []) seen.set(r.pos, text.slice(r.pos, r.end));
  };
  const visit = (node: ts.Node): void => {
    collect(ts.getLeadingCommentRanges(text, node.pos));
    collect(ts.getTrailingCommentRanges(text, node.end));
    node.forEachChild(visit);
  };
  visit(source);
  collect(ts.getLeadingCommentRanges(text, source.endOfFileToken.pos));
  return [...seen].map(([pos, body]) => ({ pos, text: body }));
}

/** `file:line: text` for every comment line that matches a forbidden pattern. */
function findOutsideReferences(files: readonly string[], root: string): string[] {
  const found: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const c of comments(text)) {
      const firstLine = text.slice(0, c.pos).split('\n').length;
      c.text.split('\n').forEach((line, i) => {
        if (FORBIDDEN.some((re) => re.test(line)))
          found.push(`${relative(root, file)}:${firstLine + i}: ${line.trim()}`);
      });
    }
  }
  return found;
}

describe('source comments', () => {
  it('cite no document outside the repository and no issue number', () => {
    const files = ['src', 'test', 'bench'].flatMap((dir) => tsFiles(join(ROOT, dir)));
    const found = findOutsideReferences(files, ROOT);
    assert.deepEqual(found, [], `state the rule itself, or point to docs/:\n${found.join('\n')}`);
  });

  it('the scan finds a reference in a comment and ignores the same text in code', () => {
    const text = "const a = 'see DECISIONS.md';\n/**\n * Per spec 2.1.\n */\nconst b = 1; // issue #8\n";
    const found = comments(text).filter((c) => FORBIDDEN.some((re) => re.test(c.text)));
    assert.deepEqual(
      found.map((c) => c.text.trim().split('\n')[0]),
      ['/**', '// issue #8'],
    );
  });
});
