# syntax=docker/dockerfile:1
# Portico gateway image: `docker build -t portico .` (or `podman build --format docker -t portico .`).
# docs/deploy.md says how to run it and how scripts/test-image.sh builds and runs it for real.

# The base image is an argument so that a mirror, a pinned digest or another Node line can be used.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Behind a TLS-intercepting proxy npm needs the proxy's CA: pass it as the build secret npm_ca
# (docker build --secret id=npm_ca,src=/path/ca.pem). Without the secret, npm uses Node's own CAs.
# --ignore-scripts: no dependency needs an install script to build or run the gateway.
RUN --mount=type=secret,id=npm_ca \
    if [ -f /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi; \
    npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json --sourceMap false --declaration false \
    && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    PORTICO_CONFIG=/etc/portico/gateway.yaml
WORKDIR /app
# Owned by root and not writable by the gateway's user: the image runs with a read-only root
# filesystem, and the gateway writes only to stdout.
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
COPY schema ./schema
COPY LICENSE README.md CHANGELOG.md ./
USER node
EXPOSE 8080
# Node's own fetch, so the image needs no curl; PORT follows the gateway's own override.
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM (drain, exit 0), SIGINT and SIGHUP (reload) itself.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "/app/dist/src/cli/main.js"]
CMD ["start"]
