/**
 * No problem or notice repeats a value that came from the environment: it may be a secret (that is
 * what `${NAME}` is for), and what `portico check`, `start` and a rejected reload print lands in
 * terminals, CI logs and log stores. Such a value is shown as the reference that brought it in,
 * `${NAME}`, which also tells the reader where to look. Values shorter than MIN_HIDDEN_LENGTH are
 * left as they are: those are ports, flags and short names, and replacing them would garble the
 * messages that quote key paths and numbers.
 */
import type { EnvValue } from './parse.js';
import type { Problem } from './problems.js';

export const MIN_HIDDEN_LENGTH = 6;

/** `problems` with every environment value of MIN_HIDDEN_LENGTH or more replaced by `${NAME}`. */
export function hideEnvValues(problems: Problem[], values: readonly EnvValue[]): Problem[] {
  // Longest first: a value that holds another is replaced whole, not around the shorter one.
  const hidden = values
    .filter((v) => v.value.length >= MIN_HIDDEN_LENGTH)
    .sort((a, b) => b.value.length - a.value.length);
  if (hidden.length === 0) return problems;
  const hide = (text: string) => hidden.reduce((t, v) => t.split(v.value).join(`\${${v.name}}`), text);
  return problems.map((p) => ({
    ...p,
    message: hide(p.message),
    ...(p.hint === undefined ? {} : { hint: hide(p.hint) }),
  }));
}
