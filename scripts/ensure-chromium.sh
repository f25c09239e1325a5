#!/usr/bin/env bash
# The browser tests (test/app-page/) drive headless Chromium from the machine's packages through
# playwright-core, which downloads no browser. Install Debian's `chromium` when it is missing and this user
# may (root with apt-get); otherwise say what to do. CHROMIUM_PATH names another Chromium binary.
set -euo pipefail
binary="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [[ -x "$binary" ]]; then exit 0; fi
if [[ -n "${CHROMIUM_PATH:-}" ]]; then
  echo "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable Chromium; the browser tests (test/app-page/) need one" >&2
  exit 1
fi
if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null; then
  echo "Installing Debian's chromium for the browser tests (test/app-page/)…" >&2
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null; then
    apt-get update >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null
  fi
  if [[ -x "$binary" ]]; then exit 0; fi
fi
echo "The browser tests (test/app-page/) need Chromium at $binary: install it (Debian/Ubuntu: sudo apt-get install chromium)" >&2
echo "or set CHROMIUM_PATH to a Chromium or Chrome binary." >&2
exit 1
