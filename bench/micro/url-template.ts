/**
 * URL templating (src/upstream/target-url.ts): the builders compiled at config load, filled per
 * request, then the client query appended (plain, and with a template query that drops a
 * duplicate client parameter).
 * Standalone: `node --import tsx bench/micro/url-template.ts`.
 */
import type { Template } from '../../src/config/types.js';
import { isTemplate, parseTemplate } from '../../src/config/syntax/template.js';
import { appendQuery, compileUrlBuilder } from '../../src/upstream/target-url.js';
import { isMain, measure, runStandalone, type MicroSuite } from './measure.js';

function template(source: string): Template {
  const t = parseTemplate(source);
  if (!isTemplate(t)) throw new Error(t.error);
  return t;
}

export const suite: MicroSuite = {
  title: 'URL templating (compileUrlBuilder + appendQuery)',
  run(budget) {
    const fixed = template('/v1/health');
    const one = template('/v1/users/{id}');
    const two = template('/v1/users/{id}/orders?companyId={company}');
    const buildFixed = compileUrlBuilder(fixed);
    const buildOne = compileUrlBuilder(one);
    const buildTwo = compileUrlBuilder(two);
    const p1 = { id: '8812' };
    const p2 = { id: '8812', company: 'acme corp' };
    if (buildTwo(p2) !== '/v1/users/8812/orders?companyId=acme%20corp') throw new Error(`unexpected ${buildTwo(p2)}`);
    if (appendQuery(buildTwo(p2), two, 'companyId=9&page=2') !== '/v1/users/8812/orders?companyId=acme%20corp&page=2')
      throw new Error('appendQuery changed');
    return [
      measure('no params, no query', () => appendQuery(buildFixed(p1), fixed, ''), budget),
      measure('1 param + client query', () => appendQuery(buildOne(p1), one, 'page=2&sort=name'), budget),
      measure(
        '2 params, template query + client query (dedupe)',
        () => appendQuery(buildTwo(p2), two, 'companyId=9&page=2'),
        budget,
      ),
    ];
  },
};

if (isMain(import.meta.url)) await runStandalone(suite);
