#!/usr/bin/env bash
# The tests need PostgreSQL at 127.0.0.1:5432 (trust auth, database `test`; see test/support/test-database.ts).
# On this kind of machine it is installed but may be stopped: start the local cluster when it does not answer.
set -euo pipefail
if [[ -n "${TEST_POSTGRES_URL:-}" ]]; then exit 0; fi # someone else's server: theirs to run
if pg_isready -q -h 127.0.0.1 -p 5432; then exit 0; fi
if command -v pg_ctlcluster >/dev/null && [[ -d /etc/postgresql ]]; then
  version=$(ls /etc/postgresql | sort -V | tail -1)
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
fi
for _ in $(seq 1 30); do
  if pg_isready -q -h 127.0.0.1 -p 5432; then exit 0; fi
  sleep 1
done
echo "PostgreSQL does not answer at 127.0.0.1:5432; the tests need it (or set TEST_POSTGRES_URL)" >&2
exit 1
