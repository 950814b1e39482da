# Palaver runs its TypeScript through tsx, as in development; only the browser bundles are built.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the browser bundles are built below, once their sources are copied in.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY config ./config
COPY src ./src
COPY scripts ./scripts
COPY web ./web
RUN npm run build:web
# media/ exists in the image so that a volume mounted there (docker-compose.yml) starts owned by node.
RUN mkdir -p /app/data/media && chown -R node:node /app/data
USER node
EXPOSE 3000
# node directly (not npm) so SIGTERM reaches Palaver and it shuts down gracefully. The heap limit
# as `npm start` sets it: V8 then lets garbage grow to at most 1.6 times the live heap before a
# full collection, instead of 4 times (docs/performance.md, Memory per busy conversation).
CMD ["node", "--max-old-space-size=1024", "--import", "tsx", "src/main.ts"]
