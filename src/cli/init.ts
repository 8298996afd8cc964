/** `portico init`: writes a commented starter configuration that `portico check` accepts as written. */
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliArgs } from './args.js';
import { starterConfig } from './starter-config.js';

export interface InitResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The package's JSON Schema: dist/src/cli/ when installed, src/cli/ in a checkout. */
function schemaFile(): string | undefined {
  return ['../../../schema/portico.schema.json', '../../schema/portico.schema.json']
    .map((p) => fileURLToPath(new URL(p, import.meta.url)))
    .find((file) => existsSync(file));
}

/** The `$schema` reference as the written file sees it: relative, with forward slashes. */
export function schemaRefFor(target: string, schema: string | undefined): string {
  if (schema === undefined) return 'node_modules/portico/schema/portico.schema.json';
  const ref = relative(dirname(resolve(target)), schema)
    .split(sep)
    .join('/');
  return ref.startsWith('.') || ref.startsWith('/') ? ref : `./${ref}`;
}

/** Writes the starter file; never replaces an existing one unless `--force`. */
export function runInit(
  args: Pick<CliArgs, 'config' | 'configGiven' | 'force'>,
  env: NodeJS.ProcessEnv = {},
): InitResult {
  const target = args.config;
  try {
    // 'wx' fails when the file exists, atomically: no window between a check and the write.
    writeFileSync(target, starterConfig({ schemaRef: schemaRefFor(target, schemaFile()) }), {
      flag: args.force ? 'w' : 'wx',
    });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'EEXIST')
      return {
        code: 1,
        stdout: '',
        stderr: `portico: ${target} already exists; nothing written (--force overwrites it)\n`,
      };
    return { code: 1, stdout: '', stderr: `portico: cannot write ${target}: ${(err as Error).message}\n` };
  }
  const config = args.configGiven ? ` --config ${target}` : '';
  // Run through npx, the next commands need npx too.
  const portico = env.npm_lifecycle_event === 'npx' ? 'npx portico' : 'portico';
  return {
    code: 0,
    stdout:
      `Wrote ${target}: one public route, GET /api/hello -> \${BACKEND_URL:-http://localhost:3000}/hello.\n` +
      `Next: ${portico} check${config}   then: ${portico} start${config}\n`,
    stderr: '',
  };
}
