/**
 * Where a plugin's `module:` points: a path relative to the configuration file's folder, or a
 * package installed where Node would find it from that folder (its `node_modules`, then the
 * parents'). Packages are resolved as ESM imports are: the `exports` entry (`import`, `node`,
 * `default` conditions), else `main`, else `index.js`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/** The file a plugin module names, or why it cannot be found. */
export function resolvePluginModule(module: string, baseDir: string): { file: string } | { error: string } {
  if (module.startsWith('.') || isAbsolute(module)) {
    const file = resolve(baseDir, module);
    return existsSync(file) ? { file } : { error: 'no such file (a path is relative to the configuration file)' };
  }
  const [pkg, subpath] = splitPackage(module);
  for (let dir = resolve(baseDir); ; dir = dirname(dir)) {
    const root = join(dir, 'node_modules', pkg);
    if (existsSync(join(root, 'package.json'))) return packageEntry(root, subpath);
    if (dirname(dir) === dir) break;
  }
  return {
    error: `package "${pkg}" is not installed in ${resolve(baseDir)} or a folder above it (npm install ${pkg})`,
  };
}

/** `@scope/name/sub` -> ['@scope/name', './sub']. */
function splitPackage(module: string): [string, string] {
  const parts = module.split('/');
  const n = module.startsWith('@') ? 2 : 1;
  const rest = parts.slice(n).join('/');
  return [parts.slice(0, n).join('/'), rest === '' ? '.' : `./${rest}`];
}

function packageEntry(root: string, subpath: string): { file: string } | { error: string } {
  let manifest: { exports?: unknown; main?: unknown };
  try {
    manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as typeof manifest;
  } catch (err) {
    return { error: `cannot read ${join(root, 'package.json')}: ${(err as Error).message}` };
  }
  let target: string | undefined;
  if (manifest.exports !== undefined) {
    const exp = manifest.exports;
    const map = isRecord(exp) && Object.keys(exp).some((k) => k.startsWith('.')) ? exp : { '.': exp };
    target = conditional(map[subpath]);
    if (target === undefined) return { error: `the package at ${root} exports no "${subpath}" for import` };
  } else if (subpath !== '.') target = subpath;
  else target = typeof manifest.main === 'string' ? manifest.main : 'index.js';
  const file = resolve(root, target);
  return existsSync(file) ? { file } : { error: `no file ${file} (named by ${join(root, 'package.json')})` };
}

/** The entry of an `exports` value for an import in Node. */
function conditional(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(conditional).find((v) => v !== undefined);
  if (!isRecord(value)) return undefined;
  for (const condition of ['import', 'node', 'default']) {
    const found = conditional(value[condition]);
    if (found !== undefined) return found;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
