/**
 * `${NAME}` and `${NAME:-default}` in a parsed configuration (config/parse.ts), replaced from the
 * environment on the YAML document, where it is still known which values were unquoted.
 */
import { isPair, isScalar, isSeq, visit, type Node } from 'yaml';
import type { ConfigPath, EnvValue } from './parsed.js';

const ENV_REF = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Replaces `${NAME}` and `${NAME:-default}` in every string scalar; `$$` is a literal `$`.
 * Substituted text is kept exactly as it came from the environment (a secret with ` #`, quotes or
 * only digits stays that text); the paths of unquoted whole-value references are recorded so that
 * validation can read them as numbers or booleans where the schema asks for one, and the values
 * taken from the environment so that no message repeats them (hide-env-values.ts).
 */
export function substituteEnv(
  root: unknown,
  env: NodeJS.ProcessEnv,
  report: (node: Node, message: string) => void,
  found: { wholeEnvPaths: ConfigPath[]; envValues: EnvValue[] },
): void {
  visit(root as Node, {
    Scalar(_key, node, ancestors) {
      if (typeof node.value !== 'string' || !node.value.includes('$')) return;
      if (node.type === 'PLAIN' && WHOLE_REF.test(node.value)) {
        const path = valuePath(ancestors, node);
        if (path !== undefined) found.wholeEnvPaths.push(path);
      }
      node.value = node.value.replace(ENV_REF, (match, name: string | undefined, fallback: string | undefined) => {
        if (match === '$$') return '$';
        const value = env[name!];
        if (value !== undefined && (value !== '' || fallback === undefined)) {
          found.envValues.push({ name: name!, value });
          return value;
        }
        if (fallback !== undefined) return fallback;
        // A default written in the file would put the secret in the file, the thing ${} avoids.
        const secret = SECRET_KEY.test(keyOf(ancestors, node) ?? '');
        report(
          node,
          `environment variable ${name} is not set (${secret ? `export ${name}=... before starting portico` : `export ${name}=..., or write \${${name}:-default} to give a default`})`,
        );
        // The reference stays as written: checks of the empty value would only echo this problem.
        return match;
      });
    },
  });
}

/** Keys whose values are credentials: no default is ever suggested for them. */
const SECRET_KEY = /secret|password|passwd|token|key|credential/i;

/** The name of the key whose value is `node`, if any. */
function keyOf(ancestors: readonly unknown[], node: unknown): string | undefined {
  const parent = ancestors[ancestors.length - 1];
  return isPair(parent) && parent.value === node && isScalar(parent.key) ? String(parent.key.value) : undefined;
}

const WHOLE_REF = /^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/;

/** The key path of a value node from its ancestors; undefined for a map key. */
function valuePath(ancestors: readonly unknown[], node: unknown): ConfigPath | undefined {
  const chain = [...ancestors, node];
  const path: (string | number)[] = [];
  for (let i = 0; i < chain.length - 1; i++) {
    const a = chain[i];
    const next = chain[i + 1];
    if (isSeq(a)) path.push(a.items.indexOf(next as never));
    else if (isPair(a)) {
      if (a.value !== next || !isScalar(a.key)) return undefined;
      path.push(String(a.key.value));
    }
  }
  return path;
}
