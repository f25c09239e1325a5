#!/usr/bin/env bash
# The ledger tests (ASTERISK_CDR_URL) need MariaDB/MySQL at 127.0.0.1:3306 with root over the unix socket
# (`mysql -uroot`); each test folder creates its own database and a password user on 127.0.0.1.
# On this kind of machine it is installed but may be stopped: start the local server when it does not answer.
set -euo pipefail
if [[ -n "${TEST_MARIADB_URL:-}" ]]; then exit 0; fi # someone else's server: theirs to run
answers() { mysqladmin -uroot --connect-timeout=2 ping >/dev/null 2>&1; }
if answers; then exit 0; fi
if command -v service >/dev/null && [[ -x /etc/init.d/mariadb || -x /etc/init.d/mysql ]]; then
  service mariadb start >/dev/null 2>&1 || service mysql start >/dev/null 2>&1 || true
fi
if ! answers && command -v mysqld_safe >/dev/null; then
  (mysqld_safe >/dev/null 2>&1 &)
fi
for _ in $(seq 1 30); do
  if answers; then exit 0; fi
  sleep 1
done
echo "MariaDB does not answer at 127.0.0.1:3306 (mysql -uroot); the ledger tests need it" >&2
exit 1
