/** What a set of field rules (`response:` on a route, the same keys on a backend) asks for. */
import type { FieldRules } from '../types.js';

/** True when the rules change an answer: an allow list, a deny entry or a rename (mapping/field-filter.ts applies them). */
export function hasFieldRules(rules: FieldRules | undefined): rules is FieldRules {
  if (rules === undefined) return false;
  return (
    rules.allow !== undefined ||
    (rules.deny !== undefined && rules.deny.length > 0) ||
    (rules.rename !== undefined && Object.keys(rules.rename).length > 0)
  );
}
