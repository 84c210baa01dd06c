# syntax=docker/dockerfile:1
# One image for both services and the CLI; the Deployment picks the entry point
# (docs/adr/0047-container-image.md):
#   node management-service/dist/main.js   (port 8080, the default)
#   node data-service/dist/main.js         (port 8081)
#   node cli/dist/main.js <command>        (migrate, data sample …, bus-credentials sync …)
# `npm run image:build` builds it without any registry: both bases are made locally from Debian
# and from Node.js verified against scripts/image/toolchain.json. With a registry:
#   docker build --build-arg BUILD_IMAGE=node:22-bookworm-slim --build-arg RUNTIME_BASE=debian:bookworm-slim .
ARG BUILD_IMAGE=localhost/platform-node-build:22
ARG RUNTIME_BASE=localhost/platform-debian:bookworm

# Every workspace's package.json (npm ci refuses a lockfile whose workspaces are missing), and
# nothing else, so that the installs below are rebuilt only when a manifest changes.
FROM ${BUILD_IMAGE} AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
COPY api-types/package.json api-types/
COPY shared/package.json shared/
COPY dev-stack/package.json dev-stack/
COPY test-support/package.json test-support/
COPY clients/package.json clients/
COPY management-service/package.json management-service/
COPY data-service/package.json data-service/
COPY e2e/package.json e2e/
COPY console/package.json console/
COPY bench/package.json bench/
COPY cli/package.json cli/
ENV npm_config_fund=false \
    npm_config_audit=false \
    npm_config_update_notifier=false

# The compiled build: every dependency, dev tools included, then the sources.
FROM manifests AS build
# --ignore-scripts: the lockfile's install scripts belong to dev tools the build does not need
# (embedded-postgres, telemetry); esbuild finds its platform package without its script. The CA of
# an egress proxy, when the build is given one, is a secret mounted for this step only.
RUN --mount=type=secret,id=npm_ca \
    if [ -f /run/secrets/npm_ca ]; then export npm_config_cafile=/run/secrets/npm_ca; fi; \
    npm ci --ignore-scripts
COPY . .
# The declarations tsc writes beside the JavaScript serve the type checker only.
RUN npm run -s build \
 && find api-types/dist shared/dist management-service/dist data-service/dist cli/dist \
      \( -name '*.d.ts' -o -name '*.d.ts.map' \) -delete

# What the entry points import at run time and nothing more: no TypeScript, tsx, test or lint tools.
# `npm ci --omit=dev --workspace=…` would install every workspace's production dependencies
# (embedded-postgres, fast-check): the manifests are first cut down to the packages the image runs,
# then npm installs the lockfile's versions of what they need. The packages' type declarations,
# TypeScript sources, source maps and read-me files are removed: nothing loads them at run time
# (Node.js strips no types under node_modules), and they were 70 MB of the image. DuckDB's library
# loses the symbols only a debugger reads (11 MB), where the build image has strip (binutils).
FROM manifests AS prod-deps
COPY scripts/image/runtime-manifests.mjs /tmp/
RUN --mount=type=secret,id=npm_ca \
    if [ -f /run/secrets/npm_ca ]; then export npm_config_cafile=/run/secrets/npm_ca; fi; \
    node /tmp/runtime-manifests.mjs \
 && npm install --omit=dev --ignore-scripts --no-save \
 && rm -rf dev-stack test-support clients e2e console/package.json bench \
 && find node_modules -type f \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' -o -name '*.md' \) -delete \
 && if command -v strip > /dev/null; then strip --strip-unneeded node_modules/@duckdb/node-bindings-linux-*/libduckdb.so; fi

# The SBOM of the production install exactly as the image ships it, by the project's own command
# (docs/adr/0046-supply-chain.md), which holds it to `npm ls --omit=dev` of that tree.
FROM build AS sbom
COPY --from=prod-deps /app /prod
RUN npm run -s sbom -- --dir /prod --output-file sbom.cdx.json

# The runtime: Debian's essentials, the node binary, compiled JavaScript, the files the services
# read from disk, production dependencies. No npm, no compiler, no TypeScript sources.
FROM ${RUNTIME_BASE} AS runtime
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED
ARG SOURCE
LABEL org.opencontainers.image.title="investment-platform" \
      org.opencontainers.image.description="management-service, data-service and the platform CLI (compiled, Node.js 22)" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
# HOME at /tmp: the root filesystem is read-only and /tmp the one writable place. AsyncLocalStorage
# on AsyncContextFrame, Node.js 24's default (docs/adr/0064-async-context-frame.md).
ENV NODE_ENV=production \
    NODE_OPTIONS="--conditions=compiled --enable-source-maps --experimental-async-context-frame" \
    HOME=/tmp \
    PLATFORM_VERSION=${VERSION} \
    PLATFORM_REVISION=${REVISION}
WORKDIR /app
COPY --from=build /usr/local/bin/node /usr/local/bin/node
# Root node_modules with the workspace links (node_modules/@platform/* -> ../../<package>), any
# nested node_modules, and every package.json (the links' targets and their exports).
COPY --from=prod-deps /app/ ./
COPY contracts/*.yaml contracts/
COPY shared/migrations shared/migrations
COPY management-service/migrations management-service/migrations
COPY data-service/migrations data-service/migrations
COPY data-service/schema data-service/schema
COPY --from=build /app/console/dist console/dist
COPY --from=build /app/api-types/dist api-types/dist
COPY --from=build /app/shared/dist shared/dist
COPY --from=build /app/management-service/dist management-service/dist
COPY --from=build /app/data-service/dist data-service/dist
COPY --from=build /app/cli/dist cli/dist
COPY --from=sbom /app/sbom.cdx.json sbom.cdx.json
# 65532: the conventional unprivileged "nonroot" id, numeric so that Kubernetes can verify runAsNonRoot.
USER 65532:65532
EXPOSE 8080 8081
CMD ["node", "management-service/dist/main.js"]
