# syntax=docker/dockerfile:1
# Cairn's image: `docker build -t cairn .` from the repository root. One image for every
# command: `cairn serve` (the default), `cairn cortex`, `cairn mcp`.
#
# The image runs what users install: the build stage compiles both packages and packs them
# with `npm pack`; the final stage installs those two tarballs globally, with production
# dependencies only, exactly as `npm install -g cairn-memory` would from the registry.
#
# Node comes from the base image. The repository's npm `node` package (a development
# dependency pinning Node 24 for its scripts) is not used here; NODE_VERSION follows that pin,
# and test/deploy/dockerfile.test.ts fails when the two disagree.
ARG NODE_VERSION=24.21.0

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.base.json ./
COPY packages/client/package.json packages/client/tsconfig.json ./packages/client/
COPY packages/server/package.json ./packages/server/
# Every dependency (TypeScript, rolldown and Vite build the packages), but no install scripts: the only
# one is the `node` package's, whose binary this stage does not need.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY scripts/build.ts scripts/build-dashboard.ts scripts/build-server.ts ./scripts/
COPY packages/client/src ./packages/client/src
COPY packages/server/src ./packages/server/src
COPY packages/server/bin ./packages/server/bin
COPY packages/server/dashboard ./packages/server/dashboard
COPY packages/server/server.json packages/server/README.md ./packages/server/
COPY packages/client/README.md ./packages/client/
RUN node scripts/build.ts --force \
 && mkdir /packs \
 && npm pack --pack-destination /packs --workspace packages/client --workspace packages/server

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production \
    CAIRN_HOST=0.0.0.0 \
    CAIRN_PORT=8080 \
    CAIRN_DATA_DIR=/data/.cairn
COPY --from=build /packs /tmp/packs
# `cairn` on PATH from the global install; the data directory exists and belongs to the
# unprivileged user, so a new named volume mounted there starts with that owner.
RUN npm install --global --omit=dev --no-audit --no-fund /tmp/packs/*.tgz \
 && rm -rf /tmp/packs \
 && npm cache clean --force \
 && mkdir -p /data/.cairn \
 && chown -R 1000:1000 /data
# The base image's `node` user, by number, so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
WORKDIR /data
VOLUME ["/data/.cairn"]
EXPOSE 8080
# Follows the container's command: `cairn cortex` (the same image) is checked as
# `cairn cortex --health` does, anything else by the server's GET /health on its port.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["cairn", "healthcheck"]
# SIGTERM (Docker's default stop signal) starts cairn's graceful stop; node handles it as PID 1.
ENTRYPOINT ["cairn"]
CMD ["serve"]
