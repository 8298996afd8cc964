/**
 * Rules on plugins that the schema cannot express: each name is declared once, and every name a
 * route's `plugins:` or `config.plugins` lists is declared in the top-level `plugins:` list. The
 * options are checked later, against the schema each plugin declares, once its module is imported
 * (src/plugins/load.ts): config/ imports no plugin code.
 */
import { didYouMean, type AddProblem } from './problems.js';
import { isRecord } from './raw-value.js';

/** Checks `plugins`, `config.plugins` and every route's `plugins`. */
export function pluginRules(raw: Record<string, unknown>, at: AddProblem): void {
  const declared: string[] = [];
  if (Array.isArray(raw.plugins))
    raw.plugins.forEach((entry: unknown, i: number) => {
      if (!isRecord(entry) || typeof entry.name !== 'string') return;
      const first = declared.indexOf(entry.name);
      if (first >= 0)
        at(
          ['plugins', i, 'name'],
          `plugins[${i}].name: "${entry.name}" is also plugins[${first}].name; name each plugin once`,
        );
      declared.push(entry.name);
    });
  const checkList = (list: unknown, path: (string | number)[]) => {
    if (!Array.isArray(list)) return;
    const seen = new Set<string>();
    list.forEach((name: unknown, j: number) => {
      if (typeof name !== 'string') return;
      const where = `${path.join('.').replace(/\.(\d+)/g, '[$1]')}[${j}]`;
      if (seen.has(name)) at([...path, j], `${where}: "${name}" is listed twice`);
      seen.add(name);
      if (declared.includes(name)) return;
      const near = didYouMean(name, declared);
      at(
        [...path, j],
        `${where}: no plugin is named "${name}"`,
        near !== undefined
          ? `did you mean "${near}"?`
          : 'declare it in the top-level plugins: list, see docs/plugins.md',
      );
    });
  };
  if (isRecord(raw.config)) checkList(raw.config.plugins, ['config', 'plugins']);
  if (Array.isArray(raw.routes))
    raw.routes.forEach((route: unknown, i: number) => {
      if (isRecord(route)) checkList(route.plugins, ['routes', i, 'plugins']);
    });
}
