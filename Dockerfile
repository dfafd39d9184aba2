# syntax=docker/dockerfile:1
# The aidc-operator image: `docker build -t aidc-operator .`
# Build stage: the full toolchain compiles src/ to dist/ (npm run build).
# Final stage: Node 24 slim, production dependencies only, no npm, uid 65532.

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS production-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts \
 && npm cache clean --force

FROM ${NODE_IMAGE}
# npm, npx, corepack and yarn are not needed to run the operator: remove them (and
# their dependencies' CVEs) from the final image.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
      /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-* \
 && groupadd --gid 65532 nonroot \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin nonroot
WORKDIR /app
ENV NODE_ENV=production
# package.json carries "type": "module", which dist/ needs.
COPY --chown=0:0 package.json ./
COPY --from=production-deps --chown=0:0 /app/node_modules ./node_modules
COPY --from=build --chown=0:0 /src/dist ./dist
USER 65532:65532
EXPOSE 8080
LABEL org.opencontainers.image.title="aidc-operator" \
      org.opencontainers.image.description="Kubernetes operator for the Compute and Storage Service" \
      org.opencontainers.image.licenses="Apache-2.0"
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["run"]
