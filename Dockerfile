# customs-gateway: multi-stage image.
#
#   docker build -t customs-gateway .
#   docker run --rm -p 3000:3000 -e SANDBOX=true customs-gateway   (the sandbox; production refuses it otherwise)
#
# Stages:
#   deps    production dependencies only (npm ci --omit=dev), from the lockfile
#   build   all dependencies + `npm run build:gateway` (tsc: src/ -> dist/)
#   runtime node + production node_modules + dist/ + package.json, as user `node`
#
# NODE_IMAGE lets a build use a mirrored or locally made base image
# (scripts/container-check.sh passes localhost/node:24-slim). See docs/deployment.md#one-container.

ARG NODE_IMAGE=node:24-slim

# ---------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS base
WORKDIR /app
# npm's update check and funding/audit chatter are of no use in a build.
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false

# ---------------------------------------------------------------------------
FROM base AS deps
COPY package.json package-lock.json ./
# Production dependencies need no install scripts; --ignore-scripts keeps the
# result the same whatever npm's default for install scripts is. The lockfile
# also names the web apps' client (the workspace clients/typescript); its
# folder is not in the build context, so npm ci leaves it out.
RUN npm ci --omit=dev --ignore-scripts \
 && npm cache clean --force

# ---------------------------------------------------------------------------
FROM base AS build
COPY package.json package-lock.json ./
# Without install scripts: `prepare` would build before src/ is copied. The build
# below is whole (not incremental), so dist/ holds no build-info file.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build:gateway -- --incremental false

# ---------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime

ARG APP_VERSION=unknown
ARG VCS_REF=unknown
ARG NODE_IMAGE
LABEL org.opencontainers.image.title="customs-gateway" \
      org.opencontainers.image.description="Backend-for-frontend gateway in front of the Indonesian customs and logistics data hub (Fastify 5)" \
      org.opencontainers.image.version="${APP_VERSION}" \
      org.opencontainers.image.revision="${VCS_REF}" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"

# HOST=0.0.0.0: unset, the gateway listens on loopback when no CLIENTS_FILE is
# set (the sandbox with authentication off); in a container that is the
# container's own loopback, which a published port does not reach.
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0

WORKDIR /app

# Owned by root and read-only for the `node` user that runs the server:
# the gateway writes nothing to disk. src/app.ts reads ../package.json
# relative to dist/, so package.json sits next to dist/.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The shipped hub profiles (UPSTREAM_PROFILE_FILE=deploy/profiles/<name>.json) and their schema.
COPY deploy/profiles ./deploy/profiles
COPY package.json ./

USER node

EXPOSE 3000

# No curl in the slim image: node's own fetch probes the liveness route.
# Exec form, so no shell is needed; PORT comes from the container's env.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/live', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# SIGTERM (docker stop) goes straight to node, which closes gracefully
# (close-with-grace, 10 s budget; docker's default stop timeout is also 10 s).
STOPSIGNAL SIGTERM
# Exec form: node gets the signals itself (npm start would also rebuild via prestart).
# dist/main.js checks the Node.js version (package.json engines), then loads dist/server.js.
CMD ["node", "dist/main.js"]
