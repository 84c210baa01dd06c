# syntax=docker/dockerfile:1
# One image for both services; the Deployment picks the entry point:
#   node --import tsx management-service/src/main.ts   (port 8080)
#   node --import tsx data-service/src/main.ts         (port 8081)
#   node --import tsx scripts/cli.ts migrate           (= `npm run cli -- migrate`)
# The services run their TypeScript directly with tsx, which is a devDependency of the workspace
# root, so the install keeps dev dependencies (a plain `npm ci`).
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV npm_config_fund=false \
    npm_config_audit=false \
    npm_config_update_notifier=false
# Manifests first, so the dependency layer is rebuilt only when they change. Every workspace's
# package.json must be present for `npm ci` to accept the lockfile.
COPY package.json package-lock.json ./
COPY api-types/package.json api-types/
COPY shared/package.json shared/
COPY clients/package.json clients/
COPY management-service/package.json management-service/
COPY data-service/package.json data-service/
COPY e2e/package.json e2e/
COPY dev-stack/package.json dev-stack/
COPY test-support/package.json test-support/
COPY console/package.json console/
COPY bench/package.json bench/
# --ignore-scripts: every install script in the lockfile belongs to a dev-only tool that the
# image does not run (esbuild's binary check: esbuild finds @esbuild/<platform> without it;
# embedded-postgres; @scarf/scarf telemetry). Runtime native code (@duckdb/node-bindings-*)
# ships prebuilt in optional dependencies and needs no script.
RUN npm ci --include=dev --ignore-scripts

FROM ${NODE_IMAGE}
LABEL org.opencontainers.image.title="investment-platform" \
      org.opencontainers.image.description="management-service and data-service (TypeScript on Node.js 20, run with tsx)"
# HOME and the npm cache point at /tmp: the root filesystem is read-only in Kubernetes and /tmp is
# a writable emptyDir (tsx keeps its transform cache in os.tmpdir() too). This also lets operators
# run `npm run cli -- ...` through `kubectl exec`.
ENV NODE_ENV=production \
    HOME=/tmp \
    npm_config_cache=/tmp/.npm \
    npm_config_update_notifier=false \
    npm_config_fund=false
WORKDIR /app
# /app from the deps stage: root node_modules, nested workspace node_modules (shared/node_modules)
# and the workspace symlinks (node_modules/@platform/* -> ../../<workspace>).
COPY --from=deps /app ./
# Sources, contracts (read at start), migrations and DuckDB schema; .dockerignore keeps
# node_modules, .data, .git and tests out.
COPY . .
# The administration console served at /console/ (docs/adr/0036-administration-console.md): the
# install above skipped the root `prepare` script that builds it.
RUN npm run -s build:console
# The `node` user of the base image, numeric so that Kubernetes can verify runAsNonRoot.
USER 1000:1000
EXPOSE 8080 8081
CMD ["node", "--import", "tsx", "management-service/src/main.ts"]
