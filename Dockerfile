# syntax=docker/dockerfile:1
# One image for every process type; docker-compose and Kubernetes choose the command.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY services ./services
COPY shared ./shared
COPY bench ./bench
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# The mail worker's outbox (OUTBOX_DIR) when no SMTP_URL is set; a volume goes here.
RUN mkdir -p /app/outbox && chown node:node /app/outbox
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--max-semi-space-size=32", "--heap-growing-percent=100", "dist/services/gateway/main.js"]
