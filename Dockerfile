# syntax=docker/dockerfile:1
# Outpost: one image for both programs.
#   docker build -t outpost:dev .
#   docker run --rm -p 7002:7002 -p 9091:9091 outpost:dev gateway --insecure --database memory://
#   docker run --rm -v "$PWD/agent.yaml:/etc/outpost/agent.yaml:ro" -e OUTPOST_HEALTHCHECK_URL=http://127.0.0.1:8082/livez \
#     outpost:dev agent --config /etc/outpost/agent.yaml
# Kubernetes manifests: deploy/ (docs/quick-start.md). test/deploy/dockerfile.test.ts checks this file's structure.
#
# Base image: Debian bookworm "slim" rather than Alpine. The runtime needs no native modules either way, but the
# whole test suite runs on glibc, and Node's getaddrinfo under musl has differed from glibc on Kubernetes DNS search
# paths; the few megabytes Alpine saves are not worth running an untested libc. Node >= 20.19 is required.
ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: install every dependency, compile the server (tsc → dist/, the CLI bundle → dist/bundle/) and the dashboard (Vite → web/dist/), then
# drop the dev dependencies so the runtime stage copies production node_modules only.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# npm ci runs the `prepare` script (a build) in a checkout; here the sources come later and the build is its own step.
COPY scripts/prepare.mjs scripts/prepare.mjs
RUN OUTPOST_SKIP_PREPARE=1 npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/stamp-build.mjs scripts/stamp-build.mjs
COPY scripts/bundle-cli.mjs scripts/bundle-cli.mjs
COPY src src
COPY web web
RUN npm run build \
  && rm -f dist/.tsbuildinfo \
  && npm prune --omit=dev --no-audit --no-fund \
  && npm cache clean --force

# ---- runtime: Node, the compiled program, its migrations and production dependencies; owned by root, run as an
# unprivileged user with a numeric id (so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd).
FROM ${NODE_IMAGE} AS runtime
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="outpost" \
      org.opencontainers.image.description="Outpost: Kubernetes agents dial out over one HTTP/2 gRPC stream to a central gateway (gateway and agent in one image)" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
RUN groupadd --system --gid 10001 outpost \
  && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin outpost
# OUTPOST_RUNTIME=dist: bin/outpost.js runs the compiled build (there are no sources to compare it with anyway).
ENV NODE_ENV=production \
    OUTPOST_RUNTIME=dist
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=build /src/web/dist ./web/dist
COPY bin ./bin
COPY drizzle ./drizzle
COPY scripts/healthcheck.mjs ./scripts/healthcheck.mjs
USER 10001:10001
# gateway: 7002 HTTP (REST, Connect, dashboard, /health, /metrics), 9091 gRPC; agent: 8082 admin, 8008 metrics.
EXPOSE 7002 9091 8082 8008
# The gateway's /health by default; agents set OUTPOST_HEALTHCHECK_URL=http://127.0.0.1:8082/livez.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["node", "/app/scripts/healthcheck.mjs"]
ENTRYPOINT ["node", "/app/bin/outpost.js"]
CMD ["--help"]
