/**
 * The docs stay navigable while the code moves: every relative link in the README,
 * CONTRIBUTING.md and docs/ reaches a file (and its heading, for `#anchor` links), and every
 * source path the contributor pages name (`server/http-server.ts`, `src/guards/`) exists, so a
 * file moved or renamed without its docs fails here.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const pages = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(ROOT, 'docs'), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name))),
].sort();

/** Markdown without its fenced blocks, where links and headings are not what they seem. */
function prose(page: string): string {
  return readFileSync(join(ROOT, page), 'utf8').replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1$/gm, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replaceAll(' ', '-');

function anchors(page: string): Set<string> {
  return new Set([...prose(page).matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!)));
}

describe('docs links', () => {
  for (const page of pages) {
    it(`${page}: every relative link and anchor resolves`, () => {
      for (const [, link] of prose(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(link!)) continue;
        const [path = '', anchor] = link!.split('#');
        const target = path === '' ? page : relative(ROOT, join(ROOT, dirname(page), path));
        assert.ok(existsSync(join(ROOT, target)), `${page}: ${link} names a file that does not exist`);
        if (anchor !== undefined && target.endsWith('.md'))
          assert.ok(anchors(target).has(anchor), `${page}: ${link} names a heading ${target} does not have`);
      }
    });
  }

  for (const page of ['CONTRIBUTING.md', 'docs/internals/architecture.md']) {
    it(`${page}: every source path it names exists`, () => {
      const text = readFileSync(join(ROOT, page), 'utf8');
      const files = [...text.matchAll(/(?<![\w./-])((?:src\/|test\/|bench\/|scripts\/)?[a-z-]+\/[a-z0-9.-]+\.ts)\b/g)];
      const folders = [...text.matchAll(/`((?:src|test|bench|docs|deploy|examples|scripts)\/[a-z/-]*)`/g)];
      const paths = [...files, ...folders];
      assert.ok(paths.length > 0);
      for (const [, path] of paths) {
        const found = [path!, `src/${path!}`].some((p) => existsSync(join(ROOT, p)));
        assert.ok(found, `${page} names ${path}, which is neither under the repository nor under src/`);
      }
    });
  }
});
