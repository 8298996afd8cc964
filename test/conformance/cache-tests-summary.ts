/**
 * The summary of a run of the public HTTP cache test suite (http-tests/cache-tests): its client
 * prints `{ testId: true | [errorName, message] }`. The headline figures count the tests whose
 * result is `true`, as the published figures do (Apache 141/69, nginx 115/66 are exactly the
 * `true` entries of the suite's results/*.json at the pinned commit). The suite's pages also grey
 * out a passed test whose `depends_on` failed (test-engine/lib/results.mjs); that stricter count
 * is printed beside. `check` tests (informational, "yes"/"no") are counted apart.
 */

/** A test as the suite declares it (tests/*.mjs), reduced to what the verdict needs. */
export interface SuiteTest {
  readonly id: string;
  /** `required` (also when absent), `optimal` (the published "optional") or `check`. */
  readonly kind?: string;
  readonly depends_on?: readonly string[];
  /** Run only by a browser, never by the CLI against a reverse proxy. */
  readonly browser_only?: boolean;
}

export interface Suite {
  readonly id: string;
  readonly tests: readonly SuiteTest[];
}

/** What the client printed for one test: `true`, or the error's name and message. */
export type RawResult = true | readonly [string, string] | false;

export type Verdict = 'pass' | 'fail' | 'setup' | 'harness' | 'dependency' | 'retry' | 'untested';

export interface Failure {
  readonly id: string;
  readonly kind: 'required' | 'optimal';
  /** The test's own verdict, dependencies not considered. */
  readonly verdict: Verdict;
  readonly message: string;
}

export interface Tally {
  /** Tests whose result is `true` (the published figures). */
  readonly passed: number;
  /** Of those, the ones whose dependencies passed too (the suite's pages). */
  readonly passedWithDependencies: number;
  readonly total: number;
}

export interface Summary {
  readonly required: Tally;
  readonly optional: Tally;
  readonly checks: { readonly yes: number; readonly total: number };
  /** Required and optional tests that did not pass, in the suite's order. */
  readonly failures: readonly Failure[];
}

function kindOf(test: SuiteTest): 'required' | 'optimal' | 'check' {
  if (test.kind === undefined || test.kind === 'required') return 'required';
  if (test.kind === 'optimal' || test.kind === 'check') return test.kind;
  throw new Error(`unknown test kind ${test.kind} of ${test.id}`);
}

/** The verdict of one test, as the suite's `determineTestResult` with dependencies honoured. */
export function verdictOf(
  byId: ReadonlyMap<string, SuiteTest>,
  results: Record<string, RawResult>,
  id: string,
  honourDependencies: boolean,
): Verdict {
  const test = byId.get(id);
  if (test === undefined) throw new Error(`unknown test ${id}`);
  const result = results[id];
  if (result === undefined) return 'untested';
  if (honourDependencies)
    for (const dep of test.depends_on ?? []) if (verdictOf(byId, results, dep, true) !== 'pass') return 'dependency';
  if (result === true) return 'pass';
  if (result === false) return 'harness';
  if (result[0] === 'Setup') return result[1] === 'retry' ? 'retry' : 'setup';
  if (result[0] === 'AbortError') return 'harness';
  return 'fail';
}

export function summarize(suites: readonly Suite[], results: Record<string, RawResult>): Summary {
  const byId = new Map<string, SuiteTest>();
  for (const suite of suites) for (const test of suite.tests) byId.set(test.id, test);
  const required = { passed: 0, passedWithDependencies: 0, total: 0 };
  const optional = { passed: 0, passedWithDependencies: 0, total: 0 };
  const checks = { yes: 0, total: 0 };
  const failures: Failure[] = [];
  for (const test of byId.values()) {
    if (test.browser_only === true) continue;
    const kind = kindOf(test);
    const verdict = verdictOf(byId, results, test.id, false);
    if (kind === 'check') {
      checks.total++;
      if (verdict === 'pass') checks.yes++;
      continue;
    }
    const tally = kind === 'required' ? required : optional;
    tally.total++;
    if (verdict === 'pass') {
      tally.passed++;
      if (verdictOf(byId, results, test.id, true) === 'pass') tally.passedWithDependencies++;
      continue;
    }
    const raw = results[test.id];
    const message = Array.isArray(raw) ? `${raw[0]}: ${raw[1]}` : '';
    failures.push({ id: test.id, kind, verdict, message });
  }
  return { required, optional, checks, failures };
}

/** The lines the conformance command prints. */
export function formatSummary(summary: Summary): string {
  const { required, optional, checks } = summary;
  const lines = [
    `required passed ${required.passed}/${required.total}, optional passed ${optional.passed}/${optional.total}` +
      ` (checks answered yes: ${checks.yes}/${checks.total})`,
    `with dependencies honoured (as cache-tests.fyi shows them): required ${required.passedWithDependencies},` +
      ` optional ${optional.passedWithDependencies}`,
  ];
  for (const kind of ['required', 'optimal'] as const) {
    const failed = summary.failures.filter((f) => f.kind === kind);
    if (failed.length === 0) continue;
    lines.push(`failing ${kind === 'required' ? 'required' : 'optional'} tests (${failed.length}):`);
    for (const f of failed)
      lines.push(`  ${f.id} [${f.verdict}]${f.message === '' ? '' : ` ${f.message.replace(/\s+/g, ' ')}`}`);
  }
  return lines.join('\n');
}
