#!/usr/bin/env bash
# Lint beside typecheck and build (`npm test`): they use a core each and neither reads what the other
# writes. Lint's output is held and printed after, so the two never interleave; the first failure fails it.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
npm run --silent lint >"$log" 2>&1 &
lint=$!
npm run typecheck && npm run build
built=$?
wait "$lint"
linted=$?
echo "== lint (eslint, prettier, dependency-cruiser, paths named in docs)"
cat "$log"
[ "$linted" -eq 0 ] || { echo "lint failed" >&2; exit "$linted"; }
exit "$built"
