# Palaver runs its TypeScript through tsx, as in development: one artefact, no build step to drift.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY config ./config
COPY src ./src
COPY scripts ./scripts
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 3000
# node directly (not npm) so SIGTERM reaches Palaver and it shuts down gracefully.
CMD ["node", "--import", "tsx", "src/main.ts"]
