# syntax=docker/dockerfile:1
# Build stage: compile TypeScript with the full toolchain, then drop dev dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY bridges ./bridges
COPY bin ./bin
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Runtime stage: production dependencies and compiled output only, as a non-root user.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./package.json
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
USER node
EXPOSE 8808
# Readiness, not liveness: 503 while the upstream is unreachable, its stdio child crash-loops, or the bridge drains.
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s CMD ["node", "-e", "fetch('http://127.0.0.1:8808/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Inside a container the faces must listen on all interfaces to be reachable through a published port;
# an environment default (not CMD) so that `docker run IMAGE --upstream …` keeps it. --listen overrides it.
ENV MCP_BRIDGE_LISTEN=0.0.0.0:8808
ENTRYPOINT ["node", "/app/dist/bin/mcp-bridge.js"]
