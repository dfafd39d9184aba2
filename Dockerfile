# syntax=docker/dockerfile:1
# The aidc-operator image: `docker build -t aidc-operator .`
# Build stages: Node 24 on Debian 12 compiles src/ to dist/ and bundles the CLI with the
# libraries it loads at start into dist/bundle/ (npm run build; the bundle holds ~10 MiB
# less at readiness, docs/performance.md), and installs the production dependencies
# alone (what the bundle imports on demand: client-node, the S3 client).
# Final stage: distroless Node 24 (Debian 12), the `nonroot` variant: no shell, no
# package manager, no npm, uid 65532. Both bases are pinned by digest, so a rebuild
# takes the same bytes; a digest bump is a reviewed change of this file.

ARG BUILD_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs24-debian12:nonroot@sha256:14d42e2511532589a7c7e01a753667a74fcc96266e137e8125006b87b0c32d0a

FROM ${BUILD_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/bundle-dist.ts ./scripts/
COPY src ./src
# The commit named in the operator's User-Agent (no .git in this stage; an ARG is in
# RUN's environment): `docker build --build-arg AIDC_GIT_SHA=$(git rev-parse --short=12 HEAD) .`
ARG AIDC_GIT_SHA=unknown
RUN npm run build

FROM ${BUILD_IMAGE} AS production-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts \
 && npm cache clean --force

FROM ${RUNTIME_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
# package.json carries "type": "module", which dist/ needs.
COPY --chown=0:0 package.json ./
COPY --from=production-deps --chown=0:0 /app/node_modules ./node_modules
COPY --from=build --chown=0:0 /src/dist/bundle ./dist/bundle
# The base's `nonroot` user, named by number so the kubelet can check runAsNonRoot.
USER 65532:65532
EXPOSE 8080
LABEL org.opencontainers.image.title="aidc-operator" \
      org.opencontainers.image.description="Kubernetes operator for the Compute and Storage Service" \
      org.opencontainers.image.licenses="Apache-2.0"
# Exec form, the base's own node binary: there is no shell to run anything else.
# --max-semi-space-size caps V8's young generation at 2 MiB per semi-space (Node's
# default grows to 16 while the modules load and keeps it, and to 64 under allocation);
# --heap-growing-percent=20 starts the next full collection once the old generation has
# grown 20% over what the last one kept (V8 lets it reach up to 4x): less CPU than
# --optimize-for-size for a few MiB more (docs/performance.md, "The image's Node
# options", has the figures). The chart adds the heap limit (NODE_OPTIONS).
ENTRYPOINT ["/nodejs/bin/node", "--max-semi-space-size=2", "--heap-growing-percent=20", "dist/bundle/main.js"]
CMD ["run"]
