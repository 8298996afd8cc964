import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { adminPageModule, expandPartials, PAGE_MODULE } from '../../scripts/gen-admin-page.js';
import { loadPageFiles } from './page.js';

describe('status page files', () => {
  it('the compiled-in module is the page as written in src/admin/page/', async () => {
    assert.equal(
      readFileSync(PAGE_MODULE, 'utf8'),
      await adminPageModule(),
      'src/admin/page-files.generated.ts is out of date: run `npm run admin-page` and commit it',
    );
  });

  it('weighs under 50 KB gzipped in all (the goal for a whole page load is 150 KB)', () => {
    const files = loadPageFiles();
    const page = ['index-token.html', 'dashboard.css', 'dashboard.js'].map((n) => files.get(n)!);
    const gzipped = page.reduce((sum, f) => sum + f.gzip.length, 0);
    assert.ok(gzipped < 50 * 1024, `${gzipped} bytes`);
    for (const f of page) assert.deepEqual(gunzipSync(f.gzip), f.body);
  });

  it('the token variants carry the sign-out form and the login complaint; the others do not', () => {
    const files = loadPageFiles();
    const text = (name: string) => files.get(name)!.body.toString('utf8');
    assert.match(text('index-token.html'), /action="\/logout"/);
    assert.doesNotMatch(text('index.html'), /logout|<!-- slot -->/);
    assert.match(text('login-failed.html'), /role="alert"/);
    assert.doesNotMatch(text('login.html'), /role="alert"|<!-- slot -->/);
  });

  it('a partial is written at its use line, indented, with its arguments; a `*` line once per item', () => {
    const page = ['<dl>', '  <!-- use tile id="t-a" label="A" -->', '</dl>'].join('\n');
    assert.equal(
      expandPartials(page, 'test.html'),
      ['<dl>', '  <div>', '    <dt>A</dt>', '    <dd id="t-a">&ndash;</dd>', '  </div>', '</dl>'].join('\n'),
    );
    const table = '<!-- use table heading="h" caption="C" columns="One|Two" numbers="" rows="r" -->';
    const ths = expandPartials(table, 'test.html')
      .split('\n')
      .filter((line) => line.includes('<th '));
    assert.deepEqual(ths, ['        <th scope="col">One</th>', '        <th scope="col">Two</th>']);
  });

  it('a partial used without one of its arguments, or with one it does not use, stops the generator', () => {
    assert.throws(() => expandPartials('<!-- use tile id="t-a" -->', 'x.html'), /partial tile wants label/);
    assert.throws(
      () => expandPartials('<!-- use tile id="t-a" label="A" colour="red" -->', 'x.html'),
      /partial tile has no colour/,
    );
  });
});
