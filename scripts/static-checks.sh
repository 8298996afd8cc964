#!/usr/bin/env bash
# The checks `npm test` runs before the tests: the type check, lint (eslint and prettier), the
# import rules, and the generated schema and configuration docs. The type check runs beside the
# others (each is single-threaded; CI has two cores); every check runs to its end, and the script
# fails when any failed, with the output of each.
set -uo pipefail
cd "$(dirname "$0")/.."
typecheck_out=$(mktemp)
trap 'rm -f "$typecheck_out"' EXIT
npm run -s typecheck >"$typecheck_out" 2>&1 &
typecheck=$!
failed=0
for check in lint deps:check schema:check config-docs:check; do
  npm run -s "$check" || { echo "static checks: npm run $check failed" >&2; failed=1; }
done
if ! wait "$typecheck"; then
  cat "$typecheck_out" >&2
  echo "static checks: npm run typecheck failed" >&2
  failed=1
fi
exit "$failed"
