#!/usr/bin/env bash
# npm run bench: every benchmark in turn, each printing its figures as JSON. One line per bench, so a new
# bench is one line here. BENCH_ONLY=<name,name> runs only those (e.g. BENCH_ONLY=card,follow).
# Each bench's figures are filed into docs/figures.json (BENCH_FIGURES names another file) with the machine,
# the date, the commit and the command; the other benches' entries stay as they were.
set -euo pipefail
cd "$(dirname "$0")/.."
FIGURES=${BENCH_FIGURES:-docs/figures.json}
npm run build
run() {
  local name=$1 output
  if [[ -n "${BENCH_ONLY:-}" && ",${BENCH_ONLY}," != *",${name},"* ]]; then return 0; fi
  output=$(mktemp)
  node -r ts-node/register/transpile-only "bench/${name}.bench.ts" | tee "$output"
  node -r ts-node/register/transpile-only bench/record-figures.ts "$name" "$output" "$FIGURES"
  rm -f "$output"
}
run http
run delivery
run ceiling
run burst
run card
run lookup
run recordings
run recording-memory
run click
run operating
bash scripts/ensure-postgres.sh
run replicas
run single-failover
run portals
run floor
run idle-portals
bash scripts/ensure-mariadb.sh
run follow-ledger
run follow
run hostile-trunks
run transcripts
